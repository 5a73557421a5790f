/**
 * The steps of making a backup that touch the server (src/modules/backups/backups.service.ts runs
 * them, in order): what to leave out (the patterns given and the server's ignore file), the save
 * commands and the wait for the game's saved line, and the packing of the folder through the
 * port into the store, hashed, counted and held to the backup limit.
 */
import { createHash } from 'node:crypto';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { IGNORE_FILE, type BackupConsistency, type BackupSettings } from '../../domain/backup.js';
import { AppError } from '../../errors.js';
import type { BackupHost } from '../../host/host.js';
import type { BackupStore } from './backup-store.js';

/** The most of the per-server ignore file that is read. */
const IGNORE_FILE_MAX_BYTES = 64 * 1024;

/** What packing a backup measured. */
export interface Packed {
  readonly bytes: number;
  readonly checksum: string;
  readonly files: number;
  readonly entries: number;
  readonly unpackedBytes: number;
}

/** Sends the before commands and waits for the saved line, if one is set. */
export async function prepareServer(
  host: Pick<BackupHost, 'watch' | 'command'>,
  server: string,
  settings: BackupSettings,
  by: string,
): Promise<BackupConsistency> {
  const savedLine = settings.savedLine;
  let saw: () => void = () => undefined;
  const saved = new Promise<void>((resolve) => {
    saw = resolve;
  });
  // The panel's own lines (the commands echoed) never count.
  const unsubscribe = savedLine === null ? () => undefined : host.watch(server, [savedLine], saw);
  let timer: NodeJS.Timeout | undefined;
  try {
    for (const line of settings.beforeCommands) host.command(server, line, by);
    if (savedLine === null) return 'commands-sent';
    return await Promise.race([
      saved.then(() => 'saved' as const),
      new Promise<'timed-out'>((resolve) => {
        timer = setTimeout(() => {
          resolve('timed-out');
        }, settings.waitSeconds * 1000);
      }),
    ]);
  } finally {
    clearTimeout(timer);
    unsubscribe();
  }
}

/**
 * What the backup leaves out, as gitignore lines: the patterns given, then the lines of the
 * server's ignore file (the host matches them: PackOptions.ignore).
 */
export async function ignoreLines(
  files: BackupHost['files'],
  server: string,
  patterns: readonly string[],
): Promise<string[]> {
  const file = await files.readText(server, [IGNORE_FILE], IGNORE_FILE_MAX_BYTES).catch(() => '');
  return [...patterns, ...file.split(/\r?\n/)];
}

/** Streams the server's folder as a .tar.gz into the store, hashing and counting it. */
export async function packInto(
  store: BackupStore,
  serverFiles: BackupHost['files'],
  server: string,
  id: string,
  ignore: readonly string[],
  settings: BackupSettings,
  storedBytes: number,
  onEntry: (files: number, unpackedBytes: number) => void,
): Promise<Packed> {
  const upload = await store.create(server, id);
  const hash = createHash('sha256');
  let bytes = 0;
  let files = 0;
  let entries = 0;
  let unpackedBytes = 0;
  try {
    const counter = new Transform({
      transform: (chunk: Buffer, _encoding, callback) => {
        bytes += chunk.length;
        hash.update(chunk);
        if (settings.maxBytes !== null && storedBytes + bytes > settings.maxBytes) {
          callback(
            new AppError(
              'BACKUP_LIMIT',
              `The backup grew past the server's backup limit of ${settings.maxBytes} bytes`,
            ),
          );
          return;
        }
        callback(null, chunk);
      },
    });
    const stored = pipeline(counter, upload.stream);
    // Awaited below, after packing: a failure of the store (or the limit, in the counter) must
    // not count as unhandled meanwhile; packing sees it too and fails.
    stored.catch(() => undefined);
    try {
      await serverFiles.packServer(server, counter, {
        ignore,
        packed: (kind, size) => {
          entries += 1;
          if (kind !== 'folder') files += 1;
          unpackedBytes += size;
          onEntry(files, unpackedBytes);
        },
      });
    } catch (error) {
      counter.destroy();
      await stored.catch(() => undefined);
      throw error;
    }
    await stored;
    await upload.commit();
  } catch (error) {
    await upload.discard();
    throw error;
  }
  return { bytes, checksum: hash.digest('hex'), files, entries, unpackedBytes };
}
