/** Finds the command named by the first word and runs it; `help` lists them or shows one. */
import { ConfigError } from '../config.js';
import { UsageError, type CliCommand, type CliIo } from './command.js';

export async function runCli(
  argv: readonly string[],
  io: CliIo,
  commands: readonly CliCommand[],
): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    const wanted = args[0] === undefined ? undefined : commands.find((c) => c.name === args[0]);
    if (wanted) io.out(`${wanted.usage}\n`);
    else io.out(overview(commands));
    return name === undefined ? 2 : 0;
  }
  const command = commands.find((candidate) => candidate.name === name);
  if (!command) {
    io.err(`Unknown command: ${name}\n\n${overview(commands)}`);
    return 2;
  }
  try {
    return await command.run(args, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`${error.message}\n\n${command.usage}\n`);
      return 2;
    }
    if (error instanceof ConfigError) {
      io.err(`Configuration error: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
}

function overview(commands: readonly CliCommand[]): string {
  const width = Math.max(0, ...commands.map((command) => command.name.length));
  const lines = commands.map((command) => `  ${command.name.padEnd(width)}  ${command.summary}`);
  return [
    'Usage: game-panel <command> [arguments]   (or: npm run cli -- <command> …)',
    '',
    'Commands:',
    ...lines,
    '',
    'game-panel help <command> shows how to use one.',
    '',
  ].join('\n');
}
