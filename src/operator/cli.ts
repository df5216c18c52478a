/** `handrail` — the operator CLI (`npx handrail --help`). */
import { runCli } from './cli/run';

// Exit explicitly once output is flushed: a refused gRPC connection can keep the event loop
// alive for seconds after the error was already reported.
const exit = (code: number) => process.stdout.write('', () => process.exit(code));

runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
}).then(exit, (err: unknown) => {
  console.error(err);
  exit(1);
});
