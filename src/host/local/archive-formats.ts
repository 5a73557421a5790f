/**
 * The formats of archives the file manager packs and unpacks: zip (yazl, yauzl) and tar, plain
 * or gzip-compressed (node-tar's parser and header encoder). This module only reads and writes
 * bytes: it never opens a path. The storage (storage/archives.ts, storage/restore.ts) opens the archive, hands its
 * descriptor here, and decides where, and whether, each entry is written.
 */
import type { FileHandle } from 'node:fs/promises';
import { once } from 'node:events';
import { PassThrough, type Readable } from 'node:stream';
import { createGunzip, createGzip } from 'node:zlib';
import { Header, Parser, Pax, type HeaderData, type ReadEntry } from 'tar';
import yauzl from 'yauzl';
import yazl from 'yazl';
import { isReserved, MAX_NAME_BYTES } from '../../domain/paths.js';
import { AppError } from '../../errors.js';

export type ArchiveFormat = 'zip' | 'tar' | 'tar.gz';

/**
 * Unpacked bytes per archive byte past which an archive is a zip bomb, once it has unpacked more
 * than `ARCHIVE_RATIO_FLOOR_BYTES` (small, very compressible files are common and harmless).
 */
export const ARCHIVE_MAX_RATIO = 200;
export const ARCHIVE_RATIO_FLOOR_BYTES = 4 * 1024 * 1024;

/** Longest symlink target an archive may hold. */
export const MAX_LINK_TARGET_BYTES = 4096;

const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;
const S_IFDIR = 0o040000;
const S_IFREG = 0o100000;
const SPECIAL_TYPES = new Set([0o010000, 0o020000, 0o060000, 0o140000]); // FIFO, chr, blk, sock

export const invalidArchive = (message: string): AppError =>
  new AppError('INVALID_ARCHIVE', message);

/**
 * The format, from the archive's first bytes (at least 512): the extension is never trusted.
 * Formats recognised but not read (xz, bzip2, 7z, zstd, rar) are named in the 400.
 */
export function detectFormat(head: Buffer): ArchiveFormat {
  const starts = (...bytes: number[]): boolean => bytes.every((byte, i) => head[i] === byte);
  if (starts(0x50, 0x4b, 0x03, 0x04) || starts(0x50, 0x4b, 0x05, 0x06)) return 'zip';
  if (starts(0x1f, 0x8b)) return 'tar.gz';
  if (head.subarray(257, 262).toString('latin1') === 'ustar') return 'tar';
  const unsupported: [string, number[]][] = [
    ['xz', [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]],
    ['bzip2', [0x42, 0x5a, 0x68]],
    ['7z', [0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c]],
    ['zstd', [0x28, 0xb5, 0x2f, 0xfd]],
    ['rar', [0x52, 0x61, 0x72, 0x21]],
  ];
  for (const [name, magic] of unsupported) {
    if (starts(...magic)) {
      throw invalidArchive(`${name} archives are not supported: use zip, tar or tar.gz`);
    }
  }
  throw invalidArchive('Not a zip, tar or tar.gz archive');
}

/**
 * The segments an entry's name leads to below the extraction folder, or 400 naming the entry:
 * absolute names, `..` anywhere, reserved or overlong names and control characters are refused,
 * never rewritten. `[]`: the folder itself (`./`), skipped.
 */
export function entrySegments(name: string): string[] {
  const refuse = (why: string): never => {
    throw invalidArchive(`Entry ${JSON.stringify(name)} ${why}; nothing was extracted`);
  };
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
  if (/[\u0000-\u001f\u007f]/.test(name)) refuse('has control characters in its name');
  if (name.startsWith('/') || /^[a-zA-Z]:/.test(name)) refuse('has an absolute path');
  const segments: string[] = [];
  for (const part of name.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') refuse('leads outside the destination (..)');
    if (isReserved(part)) refuse('has a name reserved for the panel');
    if (Buffer.byteLength(part) > MAX_NAME_BYTES) refuse('has a name that is too long');
    segments.push(part);
  }
  return segments;
}

/** One entry of an archive being read. */
export interface ArchiveEntry {
  readonly name: string;
  readonly type: 'file' | 'folder' | 'symlink' | 'hardlink' | 'special';
  /** Permission bits, when the archive has them. */
  readonly mode: number | null;
  /** Declared unpacked size. */
  readonly size: number;
  /** Declared packed size (zip only). */
  readonly compressedSize: number | null;
  /** A symlink's target (read from the body for zip). */
  target(): Promise<string>;
  /** The unpacked content, once. */
  body(): Promise<AsyncIterable<Buffer>>;
}

/**
 * Reads the archive in `handle` (of `size` bytes) entry by entry, in order, calling `visit` for
 * each and waiting for it; a rejection of `visit` stops the reading and is rethrown. Damaged
 * archives: 400 INVALID_ARCHIVE. `consumed()` in the visitor: archive bytes read so far, for
 * the compression ratio.
 */
export async function readArchive(
  handle: FileHandle,
  format: ArchiveFormat,
  size: number,
  visit: (entry: ArchiveEntry, consumed: () => number) => Promise<void>,
  declared: (entries: number) => void,
): Promise<void> {
  if (format === 'zip') await readZip(handle, size, visit, declared);
  else await readTar(handle, visit);
}

const damaged = (error: unknown): Error =>
  error instanceof AppError
    ? error
    : invalidArchive(
        `The archive is damaged or not supported (${error instanceof Error ? error.message : String(error)}); nothing was extracted`,
      );

async function readZip(
  handle: FileHandle,
  size: number,
  visit: (entry: ArchiveEntry, consumed: () => number) => Promise<void>,
  declared: (entries: number) => void,
): Promise<void> {
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) => {
    yauzl.fromFd(
      handle.fd,
      { lazyEntries: true, autoClose: false, validateEntrySizes: true },
      (error, file) => {
        if (error) reject(damaged(error));
        else resolve(file);
      },
    );
  });
  try {
    declared(zip.entryCount);
    await new Promise<void>((resolve, reject) => {
      let failed = false;
      const fail = (error: unknown): void => {
        if (failed) return;
        failed = true;
        reject(damaged(error));
      };
      zip.on('error', fail);
      zip.on('end', () => {
        if (!failed) resolve();
      });
      zip.on('entry', (entry: yauzl.Entry) => {
        const unix = entry.versionMadeBy >> 8 === 3;
        const mode = unix ? (entry.externalFileAttributes >>> 16) & 0xffff : 0;
        const kind = mode & S_IFMT;
        const type: ArchiveEntry['type'] = entry.fileName.endsWith('/')
          ? 'folder'
          : kind === S_IFLNK
            ? 'symlink'
            : SPECIAL_TYPES.has(kind)
              ? 'special'
              : kind === S_IFDIR
                ? 'folder'
                : 'file';
        const body = async (): Promise<AsyncIterable<Buffer>> => {
          if (entry.isEncrypted()) {
            throw invalidArchive(`Entry ${JSON.stringify(entry.fileName)} is encrypted`);
          }
          return new Promise<Readable>((resolveBody, rejectBody) => {
            zip.openReadStream(entry, (error, stream) => {
              if (error) rejectBody(damaged(error));
              else resolveBody(stream);
            });
          });
        };
        const archiveEntry: ArchiveEntry = {
          name: entry.fileName,
          type,
          mode: mode === 0 ? null : mode & 0o777,
          size: entry.uncompressedSize,
          compressedSize: entry.compressedSize,
          body,
          target: async () => {
            if (entry.uncompressedSize > MAX_LINK_TARGET_BYTES) {
              throw invalidArchive(`Symlink ${JSON.stringify(entry.fileName)} is too long`);
            }
            const chunks: Buffer[] = [];
            for await (const chunk of await body()) chunks.push(chunk);
            return Buffer.concat(chunks).toString('utf8');
          },
        };
        visit(archiveEntry, () => size).then(() => {
          if (!failed) zip.readEntry();
        }, fail);
      });
      zip.readEntry();
    });
  } finally {
    zip.close();
  }
}

const TAR_TYPES: Partial<Record<string, ArchiveEntry['type']>> = {
  File: 'file',
  OldFile: 'file',
  ContiguousFile: 'file',
  Directory: 'folder',
  GNUDumpDir: 'folder',
  SymbolicLink: 'symlink',
  Link: 'hardlink',
};

async function readTar(
  handle: FileHandle,
  visit: (entry: ArchiveEntry, consumed: () => number) => Promise<void>,
): Promise<void> {
  // Gzip is recognised by the parser itself; brotli (no magic number) and zstd are not read.
  // The compression ratio is the storage's to check (ArchiveLimits), naming the entry.
  const parser = new Parser({
    strict: true,
    brotli: false,
    zstd: false,
    maxDecompressionRatio: Number.POSITIVE_INFINITY,
  });
  const source = handle.createReadStream({ autoClose: false, start: 0 });
  let compressed = 0;
  await new Promise<void>((resolve, reject) => {
    let failed = false;
    let seen = 0;
    let chain = Promise.resolve();
    const fail = (error: unknown): void => {
      if (failed) return;
      failed = true;
      source.destroy();
      reject(damaged(error));
    };
    parser.on('error', (error: Error & { code?: string }) => {
      // node-tar calls an archive without entries unrecognised; one made of end-of-archive
      // blocks only is a tar archive of an empty folder (a backup of one), read as such.
      // It comes at the end, the source read whole (destroying it would close `handle`).
      if (error.code === 'TAR_BAD_ARCHIVE' && seen === 0 && !failed) {
        failed = true;
        void onlyEndBlocks(handle).then(
          (empty) => {
            if (empty) resolve();
            else reject(damaged(error));
          },
          () => {
            reject(damaged(error));
          },
        );
        return;
      }
      fail(error);
    });
    source.on('error', fail);
    parser.on('entry', (entry: ReadEntry) => {
      seen += 1;
      chain = chain.then(async () => {
        if (failed) {
          entry.resume();
          return;
        }
        const type = TAR_TYPES[entry.type] ?? 'special';
        try {
          await visit(
            {
              name: entry.path,
              type,
              mode: entry.mode === undefined ? null : entry.mode & 0o777,
              size: entry.size,
              compressedSize: null,
              target: () => Promise.resolve(entry.linkpath ?? ''),
              body: () => Promise.resolve(entry as AsyncIterable<Buffer>),
            },
            () => compressed,
          );
        } catch (error) {
          fail(error);
        }
        entry.resume();
      });
    });
    parser.on('end', () => {
      void chain.then(() => {
        if (!failed) resolve();
      });
    });
    source.on('data', (chunk: Buffer | string) => {
      compressed += chunk.length;
      if (!parser.write(chunk)) source.pause();
    });
    parser.on('drain', () => source.resume());
    source.on('end', () => parser.end());
  });
}

/** Most unpacked bytes `onlyEndBlocks` reads: an empty archive is a few blocks of zeros. */
const EMPTY_TAR_MAX_BYTES = 64 * 1024;

/**
 * Whether the gzip-compressed tar in `handle` is end-of-archive blocks only: at least two
 * 512-byte blocks, all zero, and no more than `EMPTY_TAR_MAX_BYTES` of them. (A plain tar is
 * told by the `ustar` of its first header, so one without entries never gets here.)
 */
async function onlyEndBlocks(handle: FileHandle): Promise<boolean> {
  const head = Buffer.alloc(2);
  await handle.read(head, 0, 2, 0);
  if (head[0] !== 0x1f || head[1] !== 0x8b) return false;
  const raw = handle.createReadStream({ autoClose: false, start: 0 });
  let total = 0;
  try {
    for await (const chunk of raw.pipe(createGunzip()) as AsyncIterable<Buffer>) {
      total += chunk.length;
      if (total > EMPTY_TAR_MAX_BYTES || chunk.some((byte) => byte !== 0)) return false;
    }
  } finally {
    // Left paused rather than destroyed: destroying a FileHandle's stream closes the handle.
    raw.unpipe();
  }
  return total >= 1024 && total % 512 === 0;
}

/** Writes an archive entry by entry into `output`; `end` once the last is added. */
export interface ArchiveWriter {
  readonly output: Readable;
  /** `mode`: the folder's permission bits. */
  folder(name: string, mode: number, mtime: Date): Promise<void>;
  /** `body` must give `size` bytes; fewer are padded with zeros, more are cut (tar). */
  file(name: string, mode: number, mtime: Date, size: number, body: Readable): Promise<void>;
  symlink(name: string, target: string, mtime: Date): Promise<void>;
  end(): void;
}

export function archiveWriter(format: 'zip' | 'tar.gz'): ArchiveWriter {
  return format === 'zip' ? zipWriter() : tarGzWriter();
}

function zipWriter(): ArchiveWriter {
  const zip = new yazl.ZipFile();
  const checked = (name: string): string => {
    if (name.includes('\\')) {
      throw new AppError(
        'INVALID_ARCHIVE',
        `"${name}" has a backslash in its name, which a zip archive cannot hold; use tar.gz`,
      );
    }
    return name;
  };
  return {
    // eslint-disable-next-line @typescript-eslint/no-unsafe-class-instance-assignment -- yazl's outputStream is a stream.PassThrough, typed only as NodeJS.ReadableStream
    output: zip.outputStream as Readable,
    folder(name, mode, mtime) {
      zip.addEmptyDirectory(checked(name), { mtime, mode: S_IFDIR | mode });
      return Promise.resolve();
    },
    async file(name, mode, mtime, size, body) {
      if (size === 0) {
        body.destroy();
        zip.addBuffer(Buffer.alloc(0), checked(name), { mtime, mode: S_IFREG | mode });
        return;
      }
      // Added one at a time, each read to its end before the next: one file open at a time.
      const ended = once(body, 'end');
      zip.addReadStream(body, checked(name), { mtime, mode: S_IFREG | mode });
      await ended;
    },
    symlink(name, target, mtime) {
      zip.addBuffer(Buffer.from(target), checked(name), { mtime, mode: S_IFLNK | 0o777 });
      return Promise.resolve();
    },
    end() {
      zip.end();
    },
  };
}

function tarGzWriter(): ArchiveWriter {
  const tar = new PassThrough();
  const output = tar.pipe(createGzip());
  tar.on('error', (error) => output.destroy(error));
  const write = async (chunk: Buffer): Promise<void> => {
    if (!tar.write(chunk)) await once(tar, 'drain');
  };
  const header = async (data: HeaderData): Promise<void> => {
    const encoded = new Header(data);
    // Long or non-ASCII names, long targets, big sizes: a PAX header before it holds them.
    if (encoded.encode()) {
      const { path, linkpath, mtime, size } = data;
      await write(new Pax({ path, linkpath, mtime, size }).encode());
    }
    if (!encoded.block) throw new Error('tar header not encoded');
    await write(encoded.block);
  };
  return {
    output,
    async folder(name, mode, mtime) {
      await header({ path: `${name}/`, type: 'Directory', mode, size: 0, mtime });
    },
    async file(name, mode, mtime, size, body) {
      await header({ path: name, type: 'File', mode, size, mtime });
      let left = size;
      for await (const chunk of body as AsyncIterable<Buffer>) {
        if (left === 0) break;
        const part = chunk.length > left ? chunk.subarray(0, left) : chunk;
        left -= part.length;
        await write(part);
      }
      body.destroy();
      const padding = left + ((512 - (size % 512)) % 512);
      if (padding > 0) await write(Buffer.alloc(padding));
    },
    async symlink(name, target, mtime) {
      await header({
        path: name,
        type: 'SymbolicLink',
        linkpath: target,
        mode: 0o777,
        size: 0,
        mtime,
      });
    },
    end() {
      tar.end(Buffer.alloc(1024));
    },
  };
}
