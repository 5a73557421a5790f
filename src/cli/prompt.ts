/**
 * Questions for a person, answered one line each on standard input: typed at a terminal, or
 * given ahead by a script (`printf 'answers\n' | game-panel setup`). An empty answer, or the end
 * of the input, takes the default shown in brackets. A bad answer is asked again at a terminal;
 * from a script it stops the command (exit status 2, nothing done), since asking a file again
 * would only read the next answer into the wrong question.
 */
import { createInterface } from 'node:readline';
import { UsageError, type CliIo } from './command.js';

/** Checks an answer: the value to use, or a thrown {@link UsageError} saying what is wrong. */
export type Check<T> = (answer: string) => T;

export interface Asker {
  ask<T>(question: string, fallback: string, check: Check<T>): Promise<T>;
  close(): void;
}

export function asker(io: CliIo): Asker {
  const lines = createInterface({ input: io.stdin, terminal: false, crlfDelay: Infinity });
  const next = lines[Symbol.asyncIterator]();
  let ended = false;
  const terminal = io.stdin.isTTY === true;

  const readLine = async (): Promise<string | null> => {
    if (ended) return null;
    const line = await next.next();
    if (line.done === true) {
      ended = true;
      return null;
    }
    return line.value;
  };

  return {
    async ask<T>(question: string, fallback: string, check: Check<T>): Promise<T> {
      for (;;) {
        io.out(fallback === '' ? `${question}: ` : `${question} [${fallback}]: `);
        const line = await readLine();
        // At a terminal the person's typing already ends the line; from a script, the answer
        // is shown after its question so that the transcript reads as a dialogue.
        if (line === null) io.out('\n');
        else if (!terminal) io.out(`${line}\n`);
        const answer = line?.trim() ?? '';
        try {
          return check(answer === '' ? fallback : answer);
        } catch (error) {
          if (!(error instanceof UsageError) || !terminal || ended) throw error;
          io.out(`  ${error.message}\n`);
        }
      }
    },
    close() {
      lines.close();
    },
  };
}
