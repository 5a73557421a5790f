/**
 * The operator's command line (`npm run cli -- <command>`, `game-panel <command>`): what every
 * command is and what it may use. A command reads its arguments and standard input, writes
 * lines for people, and answers an exit status: 0 done, 1 failed (the reason written), 2 used
 * wrongly (the usage written).
 */

export interface CliIo {
  /** Standard input: a password given with `--password-stdin`, or a person's answers. */
  readonly stdin: NodeJS.ReadableStream & { readonly isTTY?: boolean };
  /** Writes text to standard output as it is (add the newline). */
  out(text: string): void;
  /** Writes text to standard error as it is (add the newline). */
  err(text: string): void;
  /** The environment the configuration is read from. */
  readonly env: Readonly<Record<string, string | undefined>>;
}

export interface CliCommand {
  /** The first word: `setup`, `service`, `user`, `shutdown`. */
  readonly name: string;
  /** One line for the list of commands. */
  readonly summary: string;
  /** The full usage, shown by `help <name>` and after a usage error. */
  readonly usage: string;
  /** Runs with the words after the command's name; answers the exit status. */
  run(args: readonly string[], io: CliIo): Promise<number>;
}

/** The command was used wrongly: the message and the command's usage are shown, exit status 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}
