/**
 * A lock between test files running at once, held as a file made exclusively: one file at a
 * time starts a shared fixture (the Docker engine, the registries). A lock older than `staleMs`
 * was left by a run that was killed, and is taken over.
 */
import { closeSync, openSync, rmSync, statSync, unlinkSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

export async function fileLock(
  file: string,
  { waitMs, staleMs }: { waitMs: number; staleMs: number },
): Promise<() => void> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      closeSync(openSync(file, 'wx'));
      return () => {
        rmSync(file, { force: true });
      };
    } catch {
      const stat = statSync(file, { throwIfNoEntry: false });
      if (stat && Date.now() - stat.mtimeMs > staleMs) unlinkSync(file);
      if (Date.now() > deadline) throw new Error(`${file} is held for too long`);
      await sleep(200);
    }
  }
}
