/**
 * Reads a command's flags with Node's own parser: a flag it does not know, a value missing or a
 * word where none is expected is a {@link UsageError} (exit status 2, usage shown).
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from './command.js';

type Options = NonNullable<ParseArgsConfig['options']>;

export function readFlags<T extends Options>(
  args: readonly string[],
  options: T,
  positionals = 0,
): ReturnType<typeof parseArgs<{ args: string[]; options: T; allowPositionals: true }>> {
  let parsed;
  try {
    parsed = parseArgs({ args: [...args], options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  if (parsed.positionals.length > positionals) {
    throw new UsageError(`Unexpected argument: ${parsed.positionals[positionals] ?? ''}`);
  }
  return parsed;
}
