/**
 * Text the panel shows or records on someone else's behalf (docs/security.md, "Text that forges
 * other text"): a console line of the panel's own (`[panel] …`) quoting a command, a start
 * command with its variables or a file name, and the names and details of the audit log.
 *
 * `escapeControl` writes every control character as visible text, so that what a user or an egg
 * gave can never end the line it is quoted in, start a new one (`\n`, `\r`, U+2028, U+2029, NEL),
 * move the cursor or change colours (ESC and the rest of C0 and C1), or reorder what follows
 * (the bidirectional overrides and isolates). One spelling everywhere:
 *
 * - `\n`, `\r`, `\t` for newline, carriage return and tab;
 * - `\xHH` for every other character up to U+00FF (C0, DEL, C1: ESC is `\x1b`);
 * - `\uHHHH` above it (U+2028, U+2029, U+202A–U+202E, U+2066–U+2069).
 *
 * It is a display form, not an encoding: a backslash is left as it is, so `\n` typed as two
 * characters reads the same as an escaped newline, but both stay on one line.
 */

// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function spelled(character: string): string {
  const named = NAMED[character];
  if (named !== undefined) return named;
  const code = character.charCodeAt(0);
  return code <= 0xff
    ? `\\x${code.toString(16).padStart(2, '0')}`
    : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** `text` with every control character written out (see above); the same text when it has none. */
export function escapeControl(text: string): string {
  return text.replace(CONTROL, spelled);
}
