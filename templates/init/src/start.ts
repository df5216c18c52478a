// `npm run start-job -- <expense id> <amount>`: starts one job and prints its result. A second
// start of the same id attaches to the first job instead of paying twice.
import { connectHandrail, loadConfig, startJob } from 'handrail/client';
import { handrail } from './plugin.js';

async function main(): Promise<void> {
  const [id = 'exp-1', amount = '84.20'] = process.argv.slice(2);
  const config = loadConfig();
  const client = await connectHandrail(config, handrail);
  const { handle, created } = await startJob(client, {
    job_id: `expense-${id}`,
    entry: {
      id,
      employee: 'e-1024',
      amount_usd: Number(amount),
      category: 'meals',
      merchant: 'Trattoria Roma',
      description: 'team lunch',
    },
    goal: `Approve and pay expense ${id} if it is within policy`,
    constraints: [],
    budget: { usd: 0.05, revisions: 0 },
  });
  console.log(
    `${created ? 'started' : 'attached to'} ${handle.workflowId}: ${config.webUiUrl}/namespaces/${config.namespace}/workflows/${handle.workflowId}`,
  );
  const result = await handle.result();
  console.log(
    `${result.status}${result.reason ? ` (${result.reason})` : ''}; spent ${result.spent_usd} USD; receipt: ${JSON.stringify(result.receipt ?? null)}`,
  );
  await client.connection.close();
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
