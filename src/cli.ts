/**
 * Entry point of the operator's command line (dist/cli.mjs): `npm run cli -- <command>` or
 * `bin/game-panel <command>`. See src/cli/.
 */
import { COMMANDS } from './cli/commands.js';
import { runCli } from './cli/main.js';

process.exitCode = await runCli(
  process.argv.slice(2),
  {
    stdin: process.stdin,
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
    env: process.env,
  },
  COMMANDS,
);
