/**
 * Splits a start or stop command into program and arguments with shell-like quoting. Nothing is
 * run through a shell, so pipes, redirections, `&&`, globs and comments are refused rather than
 * silently passed on as text; `$VAR` stays literal.
 */
import { parse } from 'shell-quote';

export type ParsedCommand =
  | { readonly ok: true; readonly argv: readonly [string, ...string[]] }
  | { readonly ok: false; readonly reason: string };

export function parseCommand(command: string): ParsedCommand {
  const entries = parse(command, (name) => `$${name}`);
  const argv: string[] = [];
  for (const entry of entries) {
    if (typeof entry !== 'string') {
      const what = 'comment' in entry ? '#' : entry.op === 'glob' ? entry.pattern : entry.op;
      return {
        ok: false,
        reason: `"${what}" needs a shell, and commands run without one; wrap the command in sh -c '…' if you need it`,
      };
    }
    argv.push(entry);
  }
  const [program, ...args] = argv;
  if (program === undefined || program === '') return { ok: false, reason: 'the command is empty' };
  return { ok: true, argv: [program, ...args] };
}
