/**
 * The only code that touches a server's directory (`DATA_DIR/servers/<name>`). Server names are
 * validated before they get here (DECISIONS.md §4), so a name is always one plain path segment.
 */
import { lstat, mkdir, opendir, rm } from 'node:fs/promises';
import path from 'node:path';

/** How long a measured directory size is reused before the directory is walked again. */
const DISK_USAGE_TTL_MS = 10_000;

export class ServerStorage {
  readonly #measured = new Map<string, { bytes: number; at: number }>();
  readonly #walks = new Map<string, Promise<number>>();

  constructor(
    private readonly serversDir: string,
    private readonly now: () => number = Date.now,
  ) {}

  directoryOf(name: string): string {
    if (name === '' || name === '.' || name === '..' || name.includes('/') || name.includes('\0')) {
      throw new Error(`Not a server name: ${JSON.stringify(name)}`);
    }
    return path.join(this.serversDir, name);
  }

  /** Makes the server's directory; an existing one (files put there beforehand) is kept. */
  async create(name: string): Promise<void> {
    await mkdir(this.serversDir, { recursive: true, mode: 0o755 });
    await mkdir(this.directoryOf(name), { recursive: true, mode: 0o755 });
  }

  async remove(name: string): Promise<void> {
    this.#measured.delete(name);
    await rm(this.directoryOf(name), { recursive: true, force: true });
  }

  /**
   * Bytes used by the files under the server's directory, symlinks counted as themselves and
   * never followed. Measured at most every 10 s; concurrent callers share one walk.
   */
  async diskUsage(name: string): Promise<number> {
    const measured = this.#measured.get(name);
    if (measured && this.now() - measured.at < DISK_USAGE_TTL_MS) return measured.bytes;
    let walk = this.#walks.get(name);
    if (!walk) {
      walk = sizeOf(this.directoryOf(name)).finally(() => this.#walks.delete(name));
      this.#walks.set(name, walk);
    }
    const bytes = await walk;
    this.#measured.set(name, { bytes, at: this.now() });
    return bytes;
  }
}

async function sizeOf(directory: string): Promise<number> {
  let total = 0;
  const stack = [directory];
  for (let dir = stack.pop(); dir !== undefined; dir = stack.pop()) {
    let handle;
    try {
      handle = await opendir(dir);
    } catch {
      continue; // removed meanwhile, or unreadable
    }
    for await (const entry of handle) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) stack.push(full);
      try {
        total += (await lstat(full)).size;
      } catch {
        // removed meanwhile
      }
    }
  }
  return total;
}
