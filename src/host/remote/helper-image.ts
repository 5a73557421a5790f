/**
 * The helper image of a node (docs/nodes.md, "Files on a node"): the root file system the file
 * agent's helper container runs from, made from what the panel already has and never pulled from
 * a registry: the running Node binary (`process.execPath`), the shared libraries it needs (its
 * ELF program headers read here: the dynamic loader and each DT_NEEDED library, found as the
 * loader finds them), the file agent's bundle (`dist/file-agent.mjs`, made by `npm run build`)
 * at {@link HELPER_AGENT}, an empty {@link HELPER_SERVERS} and `/tmp`. Root `/` is 0755, every
 * entry root's; there is no /etc/passwd: the helper runs as a numeric uid:gid.
 *
 * It is packed as a tar, the same bytes every time for the same files (no times, no owners'
 * names), streamed into the engine's import endpoint (`POST /images/create?fromSrc=-`) and tagged
 * by a hash of those bytes (`game-panel-file-agent:<hash>`): an engine that has the tag already
 * is not sent it again, and a panel whose Node or agent changed sends a new one. A node of
 * another architecture than the panel's is refused: the panel's own binary would not run there.
 */
import { createHash } from 'node:crypto';
import { existsSync, realpathSync } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import type Docker from 'dockerode';
import { withDeadline } from '../runtime/deadline.js';
import { engineDeadline, reasonOf, statusOf } from '../runtime/docker/engine.js';

/** The repository of the helper image's tag. */
export const HELPER_REPOSITORY = 'game-panel-file-agent';
/** Where Node is in the helper image. */
export const HELPER_NODE = '/usr/bin/node';
/** Where the file agent is in the helper image. */
export const HELPER_AGENT = '/opt/game-panel/file-agent.mjs';
/** Where the helper mounts the server's volume: the agent's servers folder. */
export const HELPER_SERVERS = '/servers';

/** The helper image cannot be made, or the node cannot run it; the message says what to do. */
export class HelperImageError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'HelperImageError';
  }
}

/** A short call to the node's engine, failing as a HelperImageError past its deadline. */
const deadline = engineDeadline((message) => new HelperImageError(message));

/** One entry of the image's root file system. */
interface RootEntry {
  /** Its path in the image, without the leading `/` (`''`: the root). */
  readonly target: string;
  readonly mode: number;
  /** A file's content is read from here; a folder has none. */
  readonly source: string | null;
  readonly size: number;
}

export interface HelperImage {
  /** `game-panel-file-agent:<hash>`. */
  readonly tag: string;
  /** The environment the helper needs: where its libraries are. */
  readonly env: readonly string[];
  /** The image's entries, in the order packed. */
  readonly entries: readonly RootEntry[];
}

/** Node's names of architectures as Docker (Go) names them. */
const GO_ARCH: Readonly<Record<string, string>> = { x64: 'amd64', arm64: 'arm64' };

/**
 * Null when an engine whose `/version` answered `version` can run the panel's Node (`panelArch`,
 * as `process.arch` names it), else why not. Pure.
 */
export function architectureProblem(version: unknown, panelArch: string): string | null {
  const field = (name: string): unknown =>
    version !== null && typeof version === 'object'
      ? (version as Record<string, unknown>)[name]
      : undefined;
  const os = field('Os');
  const arch = field('Arch');
  const ours = GO_ARCH[panelArch];
  if (ours === undefined)
    return `the panel runs on ${panelArch}, for which it cannot make a helper image (amd64 or arm64 only)`;
  if (typeof os !== 'string' || typeof arch !== 'string')
    return 'the engine did not tell its operating system and architecture (/version)';
  if (os !== 'linux') return `the node runs ${os}; the file agent's helper needs Linux`;
  if (arch !== ours)
    return `the node is ${arch} and the panel ${ours}: the helper image is made from the panel's own Node binary, which cannot run there`;
  return null;
}

/** The folder holding the panel's package.json, searched upward from this module. */
function packageRoot(): string {
  let dir = import.meta.dirname;
  for (;;) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    const up = path.dirname(dir);
    if (up === dir) return process.cwd();
    dir = up;
  }
}

/** Where the file agent's bundle is when none is named: the package's `dist/file-agent.mjs`. */
export const defaultAgentFile = (): string => path.join(packageRoot(), 'dist', 'file-agent.mjs');

// ELF, as far as the loader's needs go (64-bit, little-endian: amd64 and arm64).
const PT_LOAD = 1;
const PT_DYNAMIC = 2;
const PT_INTERP = 3;
const DT_NEEDED = 1n;
const DT_STRTAB = 5n;
const DT_RPATH = 15n;
const DT_RUNPATH = 29n;

interface ElfNeeds {
  readonly interpreter: string | null;
  readonly needed: readonly string[];
  readonly searchPath: readonly string[];
}

/** The loader and the libraries `file` names, and where it says to look for them. */
async function elfNeeds(file: string): Promise<ElfNeeds> {
  const handle = await open(file, 'r');
  try {
    const read = async (offset: number, length: number): Promise<Buffer> => {
      const buffer = Buffer.alloc(length);
      const { bytesRead } = await handle.read(buffer, 0, length, offset);
      if (bytesRead !== length) throw new HelperImageError(`${file} is not a whole ELF file`);
      return buffer;
    };
    const header = await read(0, 64);
    if (header.readUInt32BE(0) !== 0x7f454c46 || header[4] !== 2 || header[5] !== 1)
      throw new HelperImageError(`${file} is not a 64-bit little-endian ELF file`);
    const phoff = Number(header.readBigUInt64LE(0x20));
    const phentsize = header.readUInt16LE(0x36);
    const phnum = header.readUInt16LE(0x38);
    const table = await read(phoff, phentsize * phnum);
    const loads: { vaddr: number; offset: number; size: number }[] = [];
    let interpreter: string | null = null;
    let dynamic: { offset: number; size: number } | null = null;
    for (let i = 0; i < phnum; i++) {
      const at = i * phentsize;
      const type = table.readUInt32LE(at);
      const offset = Number(table.readBigUInt64LE(at + 8));
      const vaddr = Number(table.readBigUInt64LE(at + 16));
      const size = Number(table.readBigUInt64LE(at + 32));
      if (type === PT_LOAD) loads.push({ vaddr, offset, size });
      else if (type === PT_INTERP) interpreter = cString(await read(offset, size), 0);
      else if (type === PT_DYNAMIC) dynamic = { offset, size };
    }
    if (dynamic === null) return { interpreter, needed: [], searchPath: [] };
    const entries = await read(dynamic.offset, dynamic.size);
    const tags: [bigint, bigint][] = [];
    for (let at = 0; at + 16 <= entries.length; at += 16) {
      const tag = entries.readBigInt64LE(at);
      if (tag === 0n) break;
      tags.push([tag, entries.readBigUInt64LE(at + 8)]);
    }
    const strtabAddress = Number(tags.find(([tag]) => tag === DT_STRTAB)?.[1] ?? -1n);
    const segment = loads.find(
      ({ vaddr, size }) => strtabAddress >= vaddr && strtabAddress < vaddr + size,
    );
    if (segment === undefined) throw new HelperImageError(`${file} has no string table`);
    const strtabOffset = strtabAddress - segment.vaddr + segment.offset;
    const strings = await read(strtabOffset, segment.offset + segment.size - strtabOffset);
    const named = (tag: bigint) =>
      tags.filter(([each]) => each === tag).map(([, value]) => cString(strings, Number(value)));
    const origin = path.dirname(file);
    const searchPath = [...named(DT_RPATH), ...named(DT_RUNPATH)]
      .flatMap((list) => list.split(':'))
      .filter((dir) => dir !== '')
      .map((dir) => dir.replaceAll('$ORIGIN', origin).replaceAll('${ORIGIN}', origin));
    return { interpreter, needed: named(DT_NEEDED), searchPath };
  } finally {
    await handle.close();
  }
}

function cString(buffer: Buffer, offset: number): string {
  const end = buffer.indexOf(0, offset);
  return buffer.toString('latin1', offset, end === -1 ? buffer.length : end);
}

/** Where the loader looks for a library no search path names (glibc's, with multiarch). */
function defaultLibraryDirs(): string[] {
  const triplet = process.arch === 'arm64' ? 'aarch64-linux-gnu' : 'x86_64-linux-gnu';
  return [
    `/lib/${triplet}`,
    `/usr/lib/${triplet}`,
    '/lib64',
    '/usr/lib64',
    '/lib',
    '/usr/lib',
    '/usr/local/lib',
  ];
}

/** The loader and every library `binary` loads, itself and through the others: their paths. */
export async function librariesOf(binary: string): Promise<string[]> {
  const found = new Map<string, string>();
  const paths: string[] = [];
  const first = await elfNeeds(binary);
  if (first.interpreter !== null) paths.push(first.interpreter);
  const queue: ElfNeeds[] = [first];
  for (let needs = queue.shift(); needs !== undefined; needs = queue.shift()) {
    for (const name of needs.needed) {
      if (found.has(name)) continue;
      const dirs = name.includes('/') ? [''] : [...needs.searchPath, ...defaultLibraryDirs()];
      const where = dirs.map((dir) => path.join(dir, name)).find((file) => existsSync(file));
      if (where === undefined)
        throw new HelperImageError(`the library ${name} that Node needs is not on this machine`);
      found.set(name, where);
      paths.push(where);
      queue.push(await elfNeeds(realpathSync(where)));
    }
  }
  return paths.filter((file, index) => paths.indexOf(file) === index);
}

export interface HelperImageSources {
  /** The Node binary: `process.execPath` when not given. */
  readonly node?: string;
  /** The file agent's bundle: {@link defaultAgentFile} when not given. */
  readonly agentFile?: string;
}

const made = new Map<string, Promise<HelperImage>>();

/**
 * The helper image of this panel's files (memoized per Node binary and agent file). Throws
 * {@link HelperImageError} when the agent's bundle is missing (`npm run build` makes it) or a
 * library cannot be found.
 */
export function helperImage(sources: HelperImageSources = {}): Promise<HelperImage> {
  const node = sources.node ?? process.execPath;
  const agentFile = sources.agentFile ?? defaultAgentFile();
  const key = `${node}\n${agentFile}`;
  let image = made.get(key);
  if (image === undefined) {
    image = makeImage(node, agentFile);
    made.set(key, image);
    image.catch(() => made.delete(key));
  }
  return image;
}

async function makeImage(node: string, agentFile: string): Promise<HelperImage> {
  if (!existsSync(agentFile))
    throw new HelperImageError(
      `the file agent's bundle ${agentFile} is missing: run \`npm run build\` to make it`,
    );
  const libraries = await librariesOf(realpathSync(node));
  const files = [
    { target: HELPER_NODE, source: realpathSync(node), mode: 0o755 },
    ...libraries.map((library) => ({
      target: library,
      source: realpathSync(library),
      mode: 0o755,
    })),
    { target: HELPER_AGENT, source: realpathSync(agentFile), mode: 0o644 },
  ];
  const folders = new Map<string, number>([
    ['', 0o755],
    [HELPER_SERVERS.slice(1), 0o755],
    ['tmp', 0o1777],
  ]);
  for (const { target } of files) {
    for (let dir = path.posix.dirname(target); dir !== '/'; dir = path.posix.dirname(dir))
      if (!folders.has(dir.slice(1))) folders.set(dir.slice(1), 0o755);
  }
  const entries: RootEntry[] = [...[...folders].sort(([a], [b]) => a.localeCompare(b))].map(
    ([target, mode]) => ({ target, mode, source: null, size: 0 }),
  );
  for (const file of files) {
    entries.push({
      target: file.target.slice(1),
      mode: file.mode,
      source: file.source,
      size: (await stat(file.source)).size,
    });
  }
  const hash = createHash('sha256');
  for await (const chunk of packRoot(entries)) hash.update(chunk as Buffer);
  const libraryDirs = [...new Set(libraries.map((library) => path.posix.dirname(library)))];
  return {
    tag: `${HELPER_REPOSITORY}:${hash.digest('hex').slice(0, 24)}`,
    env: [`LD_LIBRARY_PATH=${libraryDirs.join(':')}`],
    entries,
  };
}

/** The image's root file system as a tar (POSIX ustar): the same bytes for the same files. */
export function packRoot(entries: readonly RootEntry[]): Readable {
  return Readable.from(tarChunks(entries), { objectMode: false });
}

async function* tarChunks(entries: readonly RootEntry[]): AsyncGenerator<Buffer> {
  for (const entry of entries) {
    yield tarHeader(entry);
    if (entry.source === null) continue;
    const handle = await open(entry.source, 'r');
    try {
      let left = entry.size;
      while (left > 0) {
        const buffer = Buffer.alloc(Math.min(left, 1024 * 1024));
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, entry.size - left);
        if (bytesRead === 0) throw new HelperImageError(`${entry.source} changed while packed`);
        left -= bytesRead;
        yield buffer.subarray(0, bytesRead);
      }
    } finally {
      await handle.close();
    }
    const padding = (512 - (entry.size % 512)) % 512;
    if (padding > 0) yield Buffer.alloc(padding);
  }
  yield Buffer.alloc(1024);
}

/** The 512-byte ustar header of `entry`: owned by 0:0, time 0. */
function tarHeader(entry: RootEntry): Buffer {
  const folder = entry.source === null;
  const name = folder ? (entry.target === '' ? './' : `${entry.target}/`) : entry.target;
  let prefix = '';
  let rest = name;
  if (Buffer.byteLength(name) > 100) {
    const cut = name.lastIndexOf('/', name.length - 2 > 155 ? 155 : name.length - 2);
    prefix = name.slice(0, cut);
    rest = name.slice(cut + 1);
    if (Buffer.byteLength(rest) > 100 || Buffer.byteLength(prefix) > 155)
      throw new HelperImageError(`the path ${name} is too long for the image's tar`);
  }
  const header = Buffer.alloc(512);
  const put = (text: string, offset: number, length: number) => {
    header.write(text, offset, length, 'utf8');
  };
  const octal = (value: number, offset: number, length: number) => {
    put(value.toString(8).padStart(length - 1, '0'), offset, length - 1);
  };
  put(rest, 0, 100);
  octal(entry.mode, 100, 8);
  octal(0, 108, 8);
  octal(0, 116, 8);
  octal(folder ? 0 : entry.size, 124, 12);
  octal(0, 136, 12);
  put('        ', 148, 8);
  put(folder ? '5' : '0', 156, 1);
  put('ustar\u000000', 257, 8);
  put(prefix, 345, 155);
  let sum = 0;
  for (const byte of header) sum += byte;
  put(`${sum.toString(8).padStart(6, '0')}\u0000 `, 148, 8);
  return header;
}

/** How long an import may take (the image is about as large as Node: some 100 MB). */
const IMPORT_DEADLINE_MS = 300_000;

/**
 * The helper image on the engine `docker`: checked for the node's architecture, imported unless
 * the engine has its tag already. Answers the image; `imported` tells whether it was sent.
 */
export async function ensureHelperImage(
  docker: Docker,
  sources: HelperImageSources = {},
): Promise<HelperImage & { imported: boolean }> {
  const version = await deadline(docker.version(), 'tell its version');
  const problem = architectureProblem(version, process.arch);
  if (problem !== null) throw new HelperImageError(problem);
  const image = await helperImage(sources);
  if (await hasImage(docker, image.tag)) return { ...image, imported: false };
  const [repo, tag] = image.tag.split(':');
  const abort = new AbortController();
  try {
    await withDeadline(
      (async () => {
        const progress = await docker.importImage(packRoot(image.entries), {
          repo,
          tag,
          abortSignal: abort.signal,
        });
        await followImport(progress);
      })(),
      IMPORT_DEADLINE_MS,
      () => new HelperImageError('the helper image was not imported in time'),
    );
  } catch (error) {
    abort.abort();
    if (error instanceof HelperImageError) throw error;
    throw new HelperImageError(`the engine did not take the helper image: ${reasonOf(error)}`, {
      cause: error,
    });
  }
  if (!(await hasImage(docker, image.tag)))
    throw new HelperImageError('the engine took the helper image but does not have it');
  return { ...image, imported: true };
}

async function hasImage(docker: Docker, tag: string): Promise<boolean> {
  try {
    await deadline(docker.getImage(tag).inspect(), 'answer about the helper image');
    return true;
  } catch (error) {
    if (statusOf(error) === 404) return false;
    throw error;
  }
}

/** Reads an import's progress to its end; an error line is its failure. */
async function followImport(progress: NodeJS.ReadableStream): Promise<void> {
  let text = '';
  for await (const chunk of progress as AsyncIterable<Buffer | string>) text += chunk.toString();
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    let event: { error?: unknown; errorDetail?: { message?: unknown } };
    try {
      event = JSON.parse(line) as typeof event;
    } catch {
      continue;
    }
    const message = event.errorDetail?.message ?? event.error;
    if (message !== undefined)
      throw new HelperImageError(
        `the import failed: ${typeof message === 'string' ? message : JSON.stringify(message)}`,
      );
  }
}
