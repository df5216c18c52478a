/** `tsx src/worker/corpus/load.ts [dir]`: loads the help-center corpus into the configured store (idempotent). */
import { loadConfig } from '../../config';
import { openStore } from '../store';
import { HELP_CENTER_DIR, loadHelpCenter } from './index';

async function main(): Promise<void> {
  const store = await openStore(loadConfig());
  try {
    const dir = process.argv[2] ?? HELP_CENTER_DIR;
    const report = await loadHelpCenter(store, dir);
    console.log(`help center loaded into ${store.backend} from ${dir}: ${JSON.stringify(report)}`);
  } finally {
    await store.close();
  }
}

main().catch((err: Error) => {
  console.error(err.message);
  process.exit(1);
});
