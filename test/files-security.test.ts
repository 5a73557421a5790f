/**
 * The file manager is secure by construction (docs/api.md, contract §5): every operation is
 * attacked with every hostile path, in the position where that operation takes a path, and after
 * each request everything outside the server directory must be byte-for-byte what it was. Then a
 * race (a folder swapped for a symlink thousands of times while the API writes into it) and a
 * descriptor count over two thousand refused requests.
 *
 * The attacker is a plain user with access to `s1` only. Outside, next to the data directory,
 * lies a folder of bait files; `s10` (a sibling whose name starts like `s1`) holds a secret.
 * Absolute host paths point into those, never at system files, so a failure cannot harm the host.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, constants, existsSync, lstatSync, openSync, readdirSync } from 'node:fs';
import {
  lstat,
  mkdir,
  mkdtemp,
  readFile,
  readdir,
  readlink,
  realpath,
  rm,
  symlink,
  writeFile,
} from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { startPanel, suiteScope, type TestPanel } from './helpers/app.js';
import { createServer, json, register, type Session } from './helpers/factories.js';

/** Every request must be answered within this time; a FIFO opened the blocking way never is. */
const REQUEST_TIMEOUT_MS = 5_000;
/** How long the background process swaps the race folder (it stops by itself). */
const RACE_MS = 3_000;
const SWAPPER = new URL('./fixtures/folder-swapper.mjs', import.meta.url).pathname;

const OUTSIDE_SECRET = 'OUTSIDE SECRET: must never be read or overwritten\n';
const SIBLING_SECRET = 'S10 SECRET: belongs to the sibling server\n';
const ATTACK = 'ATTACK';

/** Names the attacking requests create; unique per run, so "nothing new outside" can be checked. */
const tag = randomBytes(4).toString('hex');
const NEW_FILE = `sec-new-${tag}`;
const NEW_FOLDER = `sec-dir-${tag}`;
const UPLOADED = `sec-up-${tag}.txt`;
const RENAMED = `sec-ren-${tag}`;

/**
 * The error codes these requests may meet, with their status (src/errors.ts, docs/api.md, contract
 * §2).
 */
const STATUS = {
  PATH_OUTSIDE: 403,
  INVALID_PATH: 400,
  VALIDATION_FAILED: 400,
  SYMLINK_LOOP: 400,
  SPECIAL_FILE: 400,
  NOT_A_FOLDER: 400,
  NOT_A_FILE: 400,
  ALREADY_EXISTS: 409,
  NOT_FOUND: 404,
  INVALID_UPLOAD: 400,
} as const;
type Code = keyof typeof STATUS;

/**
 * What a request must answer: an error code (or one of several), `ok` (200: it acted on something
 * inside, such as deleting a symlink itself), or an upload stored in the root under `stored`.
 */
type Outcome = Code | readonly Code[] | 'ok' | { readonly stored: string };

/** Where an operation puts the hostile text. */
type Position =
  /** Resolved to the end, a last symlink followed: list, read, download, write, create in, upload into, move to. */
  | 'path'
  /** The entry itself, a last symlink not followed: rename from, move from, delete. */
  | 'own'
  /** One new segment: create's `name`, rename's `new_name`. */
  | 'name'
  /** An uploaded part's filename, reduced to its last segment (paths.ts `uploadName`). */
  | 'filename';

type OperationName =
  | 'list'
  | 'read'
  | 'download'
  | 'write'
  | 'create file in'
  | 'create folder in'
  | 'create named'
  | 'upload into'
  | 'upload named'
  | 'rename from'
  | 'rename to'
  | 'move from'
  | 'move to'
  | 'delete';

/**
 * One hostile path. `value` and `raw` may hold `<outside>` (the outside folder's host path),
 * `<outbase>` (its name) and `<s10>` (the sibling's host path), filled in once they exist.
 */
interface Hostile {
  readonly label: string;
  /** The text as the server must see it: query strings are decoded once by the HTTP layer. */
  readonly value: string;
  /** The exact spelling in a query string, when it is not simply encodeURIComponent(value). */
  readonly raw?: string;
  /** In `path` positions. */
  readonly path: Outcome;
  /** In `own` positions; `path` when not given. */
  readonly own?: Outcome;
  /** Exceptions for single operations. */
  readonly byOp?: Partial<Record<OperationName, Outcome>>;
}

interface Operation {
  readonly name: OperationName;
  readonly position: Position;
  request(hostile: Hostile): InjectOptions;
}

// ---------------------------------------------------------------------------------------------
// The hostile paths
// ---------------------------------------------------------------------------------------------

const escape = (label: string, value: string, raw?: string): Hostile => ({
  label,
  value,
  ...(raw === undefined ? {} : { raw }),
  path: 'PATH_OUTSIDE',
});
/** A symlink as the last segment: followed in `path` positions, acted on itself in `own` ones. */
const lastLink = (label: string, value: string, followed: Outcome = 'PATH_OUTSIDE'): Hostile => ({
  label,
  value,
  path: followed,
  own: 'ok',
});
/**
 * 400 before anything touches the disk: from `userPath` / `entryName`, or earlier, for a NUL from
 * the guard on every query and JSON string (src/http/input.ts), for a name over 1024 characters
 * from the schema.
 */
const INVALID_TEXT = ['INVALID_PATH', 'VALIDATION_FAILED'] as const;
const invalid = (label: string, value: string, raw?: string): Hostile => ({
  label,
  value,
  ...(raw === undefined ? {} : { raw }),
  path: value.includes('\u0000') ? INVALID_TEXT : 'INVALID_PATH',
});
/** Looks like a way up but is a literal name inside, which does not exist: 404. */
const literal = (label: string, value: string, raw?: string): Hostile => ({
  label,
  value,
  ...(raw === undefined ? {} : { raw }),
  path: 'NOT_FOUND',
});
/**
 * An absolute host path. A leading `/` means the server's root (docs/api.md, contract §5 and
 * paths.ts), so this names something inside that does not exist: 404; refusing it outright (403) is
 * as good.
 */
const absolute = (label: string, value: string): Hostile => ({
  label,
  value,
  path: ['NOT_FOUND', 'PATH_OUTSIDE'],
});

const HOSTILE: readonly Hostile[] = [
  // `..` in all its spellings
  escape('`..` alone', '..'),
  escape('`../s10`, the sibling server', '../s10'),
  escape('`../s10/secret.txt`', '../s10/secret.txt'),
  escape('`../../../<outside>/secret.txt`', '../../../<outbase>/secret.txt'),
  escape('`a/../../s10/secret.txt`', 'a/../../s10/secret.txt'),
  escape('`a/b/../../../s10`', 'a/b/../../../s10'),
  escape('`./../s10/secret.txt`', './../s10/secret.txt'),
  escape('`/../s10/secret.txt` (a leading slash)', '/../s10/secret.txt'),
  escape(
    '`../` twelve times, up to `/` and down into the outside folder',
    `${'../'.repeat(12)}<outside>/secret.txt`,
  ),
  escape('backslashes `..\\s10\\secret.txt`', '..\\s10\\secret.txt'),
  escape('backslashes `a\\..\\..\\s10`', 'a\\..\\..\\s10'),
  escape('mixed slashes `a/..\\../s10/secret.txt`', 'a/..\\../s10/secret.txt'),
  escape('percent-encoded `%2e%2e/s10/secret.txt`', '../s10/secret.txt', '%2e%2e/s10/secret.txt'),
  escape(
    'percent-encoded with slashes `%2e%2e%2fs10%2fsecret.txt`',
    '../s10/secret.txt',
    '%2e%2e%2fs10%2fsecret.txt',
  ),
  escape(
    'percent-encoded `..%2F..%2F..%2F<outside>%2Fsecret.txt`',
    '../../../<outbase>/secret.txt',
    '..%2F..%2F..%2F<outbase>%2Fsecret.txt',
  ),
  escape(
    'percent-encoded backslashes `%2E%2E%5Cs10%5Csecret.txt`',
    '..\\s10\\secret.txt',
    '%2E%2E%5Cs10%5Csecret.txt',
  ),
  escape('percent-encoded `a%2f%2e%2e%2f%2e%2e%2fs10`', 'a/../../s10', 'a%2f%2e%2e%2f%2e%2e%2fs10'),
  // look-alikes that are literal names inside
  literal('`....//....//s10/secret.txt` (`....` is a name)', '....//....//s10/secret.txt'),
  literal(
    'double-encoded `%252e%252e/s10/secret.txt`',
    '%2e%2e/s10/secret.txt',
    '%252e%252e/s10/secret.txt',
  ),
  literal(
    'overlong UTF-8 `%c0%ae%c0%ae/s10/secret.txt`',
    '%c0%ae%c0%ae/s10/secret.txt',
    '%c0%ae%c0%ae/s10/secret.txt',
  ),
  literal('fullwidth dots `．．/s10/secret.txt`', '\uff0e\uff0e/s10/secret.txt'),
  // absolute host paths
  absolute('the absolute path of an outside file', '<outside>/secret.txt'),
  absolute('the absolute path of the outside folder', '<outside>'),
  absolute('the absolute path of the sibling server', '<s10>'),
  absolute('the absolute path of a file of the sibling server', '<s10>/secret.txt'),
  absolute('a Windows path `C:\\x\\secret.txt`', 'C:\\x\\secret.txt'),
  // symlinks out at depth 0, 1 and 2, absolute and relative
  lastLink('a symlink to an outside file (depth 0)', 'out-file'),
  lastLink('a symlink to the outside folder (depth 0)', 'out-dir'),
  escape('through a symlink to the outside folder (depth 0)', 'out-dir/secret.txt'),
  lastLink('a symlink to the outside folder (depth 1)', 'a/out-dir'),
  escape('through a symlink to the outside folder (depth 1)', 'a/out-dir/secret.txt'),
  escape('through a symlink to the outside folder into its subfolder (depth 1)', 'a/out-dir/sub'),
  lastLink('a relative symlink to the outside folder (depth 2)', 'a/b/out-dir'),
  escape('through a relative symlink to the outside folder (depth 2)', 'a/b/out-dir/secret.txt'),
  lastLink('a symlink to an outside file (depth 2)', 'a/b/out-file'),
  escape('through an inside symlink, then an outside one', 'inside/out-dir/secret.txt'),
  escape('through an inside symlink, then a relative outside one', 'inside/b/out-dir/sub/deep.txt'),
  lastLink('an absolute symlink to the sibling server', 'sib'),
  escape('through an absolute symlink to the sibling server', 'sib/secret.txt'),
  lastLink('an absolute symlink to a file of the sibling server', 'sib-file'),
  escape('through a relative symlink to the sibling server', 'sib-rel/secret.txt'),
  lastLink('a relative symlink escaping with `../../..`', 'esc'),
  escape('through a relative symlink escaping with `../../..`', 'esc/<outbase>/secret.txt'),
  lastLink('a dangling symlink to a file that would be created outside', 'dangle'),
  // a loop and a FIFO
  lastLink('a symlink loop', 'loop1', 'SYMLINK_LOOP'),
  { label: 'through a symlink loop', value: 'loop1/x', path: 'SYMLINK_LOOP' },
  {
    label: 'a FIFO',
    value: 'fifo',
    path: 'SPECIAL_FILE',
    own: 'ok',
    byOp: {
      list: 'NOT_A_FOLDER',
      'create file in': 'NOT_A_FOLDER',
      'create folder in': 'NOT_A_FOLDER',
      'upload into': 'NOT_A_FOLDER',
      'move to': 'ALREADY_EXISTS',
    },
  },
  // NUL, control characters, lengths
  invalid('a NUL byte', 'a\u0000b', 'a%00b'),
  invalid(
    'a NUL byte cutting off an escape',
    '../s10/secret.txt\u0000.txt',
    '../s10/secret.txt%00.txt',
  ),
  invalid('a NUL byte after an outside symlink', 'out-file\u0000'),
  invalid('a newline', 'a\nb'),
  invalid('a carriage return', 'file.txt\r'),
  invalid('an escape character', 'a\u001b[31mb'),
  invalid('a DEL character', 'a\u007f'),
  invalid('a 300-byte segment', 'x'.repeat(300)),
  invalid('a 300-byte segment of 150 two-byte characters', 'é'.repeat(150)),
  invalid('a 300-byte segment behind an outside symlink', `a/out-dir/${'y'.repeat(300)}`),
  invalid('a 5,000-byte path', 'd/'.repeat(2500)),
  invalid('a 5,000-byte path of `../`', '../'.repeat(1667)),
  invalid(
    'a 5,000-byte path ending in an outside symlink',
    `${'./'.repeat(2490)}a/out-dir/secret.txt`,
  ),
];

// ---------------------------------------------------------------------------------------------
// The operations
// ---------------------------------------------------------------------------------------------

const BASE = '/api/servers/s1/files';

let panel: TestPanel;
let player: Session;

const query = (hostile: Hostile): string => hostile.raw ?? encodeURIComponent(hostile.value);

const OPERATIONS: readonly Operation[] = [
  {
    name: 'list',
    position: 'path',
    request: (h) => ({ method: 'GET', url: `${BASE}?path=${query(h)}`, headers: player.headers }),
  },
  {
    name: 'read',
    position: 'path',
    request: (h) => ({
      method: 'GET',
      url: `${BASE}/content?path=${query(h)}`,
      headers: player.headers,
    }),
  },
  {
    name: 'download',
    position: 'path',
    request: (h) => ({
      method: 'GET',
      url: `${BASE}/download?path=${query(h)}`,
      headers: player.headers,
    }),
  },
  {
    name: 'write',
    position: 'path',
    request: (h) => ({
      method: 'PUT',
      url: `${BASE}/content?path=${query(h)}`,
      headers: player.headers,
      payload: { content: ATTACK },
    }),
  },
  {
    name: 'create file in',
    position: 'path',
    request: (h) => ({
      method: 'POST',
      url: `${BASE}/create`,
      headers: player.headers,
      payload: { type: 'file', name: NEW_FILE, path: h.value },
    }),
  },
  {
    name: 'create folder in',
    position: 'path',
    request: (h) => ({
      method: 'POST',
      url: `${BASE}/create`,
      headers: player.headers,
      payload: { type: 'folder', name: NEW_FOLDER, path: h.value },
    }),
  },
  {
    name: 'create named',
    position: 'name',
    request: (h) => ({
      method: 'POST',
      url: `${BASE}/create`,
      headers: player.headers,
      payload: { type: 'file', name: h.value, path: '' },
    }),
  },
  {
    name: 'upload into',
    position: 'path',
    request: (h) => upload(`${BASE}/upload?path=${query(h)}`, UPLOADED),
  },
  {
    name: 'upload named',
    position: 'filename',
    request: (h) => upload(`${BASE}/upload?path=`, h.value),
  },
  {
    name: 'rename from',
    position: 'own',
    request: (h) => ({
      method: 'PUT',
      url: `${BASE}/rename?old_path=${query(h)}&new_name=${RENAMED}`,
      headers: player.headers,
    }),
  },
  {
    name: 'rename to',
    position: 'name',
    request: (h) => ({
      method: 'PUT',
      url: `${BASE}/rename?old_path=file.txt&new_name=${query(h)}`,
      headers: player.headers,
    }),
  },
  {
    name: 'move from',
    position: 'own',
    request: (h) => ({
      method: 'POST',
      url: `${BASE}/move`,
      headers: player.headers,
      payload: { source: h.value, destination: 'dest' },
    }),
  },
  {
    name: 'move to',
    position: 'path',
    request: (h) => ({
      method: 'POST',
      url: `${BASE}/move`,
      headers: player.headers,
      payload: { source: 'file.txt', destination: h.value },
    }),
  },
  {
    name: 'delete',
    position: 'own',
    request: (h) => ({
      method: 'DELETE',
      url: `${BASE}?path=${query(h)}`,
      headers: player.headers,
    }),
  },
];

/**
 * A multipart body built by hand. The filename goes in RFC 5987 form (`filename*=UTF-8''…`, every
 * byte but letters and digits percent-encoded), so NUL, newlines and backslashes arrive exactly.
 */
function upload(url: string, filename: string, content = ATTACK): InjectOptions {
  const boundary = `----security-${tag}`;
  const encoded = [...Buffer.from(filename, 'utf8')]
    .map((byte) => {
      const char = String.fromCharCode(byte);
      return /[A-Za-z0-9]/.test(char) ? char : `%${byte.toString(16).padStart(2, '0')}`;
    })
    .join('');
  const payload = Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename*=UTF-8''${encoded}\r\n` +
        'Content-Type: application/octet-stream\r\n\r\n',
    ),
    Buffer.from(content),
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return {
    method: 'POST',
    url,
    headers: { ...player.headers, 'content-type': `multipart/form-data; boundary=${boundary}` },
    payload,
  };
}

// ---------------------------------------------------------------------------------------------
// Expected outcomes
// ---------------------------------------------------------------------------------------------

// eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
const CONTROL = /[\u0000-\u001f\u007f]/;
const bytes = (text: string): number => Buffer.byteLength(text);

/** The entries buildFixture puts in the root of s1. */
const ROOT_FOLDERS = new Set(['a', 'dest']);
const ROOT_ENTRIES = new Set([
  ...ROOT_FOLDERS,
  'file.txt',
  'out-file',
  'out-dir',
  'sib',
  'sib-file',
  'sib-rel',
  'esc',
  'dangle',
  'loop1',
  'loop2',
  'inside',
  'inside-abs',
  'fifo',
]);

/**
 * A name position: one plain segment (docs/api.md, contract §5), else 400; an existing name is 409.
 */
function nameOutcome(value: string): Outcome {
  if (value.length > 1024 || value.includes('\u0000')) return INVALID_TEXT;
  if (CONTROL.test(value) || /[/\\]/.test(value) || ['', '.', '..'].includes(value)) {
    return 'INVALID_PATH';
  }
  if (bytes(value) > 255) return 'INVALID_PATH';
  return ROOT_ENTRIES.has(value) ? 'ALREADY_EXISTS' : 'ok';
}

/**
 * An uploaded filename: whatever a client sends, only the last segment is kept and stored in the
 * target folder (paths.ts `uploadName`); nothing usable is 400. A FIFO of that name is refused, a
 * folder too; an existing symlink is replaced by the new file, never written through.
 */
function filenameOutcome(value: string): Outcome {
  // The multipart parser drops a part whose filename holds a line break: then there is no file.
  if (/[\r\n]/.test(value)) return ['INVALID_PATH', 'INVALID_UPLOAD'];
  const last = value.replaceAll('\\', '/').split('/').at(-1) ?? '';
  if (CONTROL.test(value) || ['', '.', '..'].includes(last) || bytes(last) > 255) {
    return 'INVALID_PATH';
  }
  if (last === 'fifo') return 'SPECIAL_FILE';
  if (ROOT_FOLDERS.has(last)) return 'NOT_A_FILE';
  return { stored: last };
}

function expected(hostile: Hostile, operation: Operation): Outcome {
  const special = hostile.byOp?.[operation.name];
  if (special !== undefined) return special;
  switch (operation.position) {
    case 'path':
      return hostile.path;
    case 'own':
      return hostile.own ?? hostile.path;
    case 'name':
      return nameOutcome(hostile.value);
    case 'filename':
      return filenameOutcome(hostile.value);
  }
}

const isStored = (outcome: Outcome): outcome is { readonly stored: string } =>
  typeof outcome === 'object' && 'stored' in outcome;
const isRefusal = (outcome: Outcome): boolean => outcome !== 'ok' && !isStored(outcome);

// ---------------------------------------------------------------------------------------------
// The disk: a fixture inside s1, and snapshots of everything around it
// ---------------------------------------------------------------------------------------------

let serversDir: string;
let s1: string;
let s10: string;
let outside: string;
/** Host paths no answer may show, unless the request itself contained them. */
let hostPaths: string[];
/** Everything outside s1 as it was before the attacks. */
let baseline: OutsideState;
/** s1 as buildFixture leaves it. */
let pristine: Tree;

/** A case with its placeholders filled in. */
const materialize = (hostile: Hostile): Hostile => {
  const fill = (text: string): string =>
    text
      .replaceAll('<outside>', outside)
      .replaceAll('<outbase>', path.basename(outside))
      .replaceAll('<s10>', s10);
  return {
    ...hostile,
    value: fill(hostile.value),
    ...(hostile.raw === undefined ? {} : { raw: fill(hostile.raw) }),
  };
};

type Tree = Record<string, string>;

const sha256 = async (file: string): Promise<string> =>
  createHash('sha256')
    .update(await readFile(file))
    .digest('hex');

/** Every entry under `root`, never following a symlink: type, size, mode and sha256, or target. */
async function tree(root: string): Promise<Tree> {
  const result: Tree = {};
  const walk = async (relative: string): Promise<void> => {
    for (const name of (await readdir(path.join(root, relative))).sort()) {
      const entry = path.join(relative, name);
      const full = path.join(root, entry);
      const stat = await lstat(full);
      if (stat.isSymbolicLink()) result[entry] = `symlink -> ${await readlink(full)}`;
      else if (stat.isDirectory()) {
        result[entry] = 'folder';
        await walk(entry);
      } else if (stat.isFile()) {
        result[entry] =
          `file ${stat.size} ${(stat.mode & 0o7777).toString(8)} ${await sha256(full)}`;
      } else result[entry] = stat.isFIFO() ? 'fifo' : 'special';
    }
  };
  await walk('');
  return result;
}

interface OutsideState {
  readonly outside: Tree;
  readonly sibling: Tree;
  /**
   * The data directory's top level: its files by content, but the SQLite database's files only
   * by name, as the audit log records the refused attempts there (and every reader writes the
   * shared-memory index).
   */
  readonly dataDir: Tree;
  /** Every table of the database but the audit log, by content: the attacks change no record. */
  readonly records: string;
  readonly servers: string[];
  /** The names the attacks use, wherever an escape could have put them. */
  readonly strays: string[];
}

async function outsideState(): Promise<OutsideState> {
  const dataDir: Tree = {};
  for (const name of (await readdir(panel.dataDir)).sort()) {
    const full = path.join(panel.dataDir, name);
    const stat = await lstat(full);
    dataDir[name] = stat.isDirectory()
      ? 'folder'
      : stat.isFile() && !name.startsWith('panel.sqlite')
        ? `file ${stat.size} ${await sha256(full)}`
        : 'entry';
  }
  const digest = createHash('sha256');
  for (const table of await panel.db.kysely.introspection.getTables()) {
    if (table.name === 'audit_log' || table.name.startsWith('kysely_')) continue;
    const rows = await panel.db.kysely
      .selectFrom(table.name as 'users')
      .selectAll()
      .execute();
    // Sorted: PostgreSQL may return rows in any order.
    const lines = rows.map((row) => JSON.stringify(row)).sort();
    digest.update(`${table.name}\n${lines.join('\n')}\n`);
  }
  const places = ['/', path.dirname(panel.dataDir), path.dirname(outside), serversDir];
  const strays = places.flatMap((place) =>
    [NEW_FILE, NEW_FOLDER, UPLOADED, RENAMED]
      .map((name) => path.join(place, name))
      .filter((candidate) => existsSync(candidate)),
  );
  return {
    outside: await tree(outside),
    sibling: await tree(s10),
    dataDir,
    records: digest.digest('hex'),
    servers: (await readdir(serversDir)).sort(),
    strays,
  };
}

async function assertOutsideUnchanged(context: string): Promise<void> {
  assert.deepEqual(
    await outsideState(),
    baseline,
    `${context}: something outside the server directory changed`,
  );
}

/** (Re)builds s1: bait inside, symlinks out at several depths, a loop, a FIFO, inside links. */
async function buildFixture(): Promise<void> {
  for (const name of await readdir(s1)) await rm(path.join(s1, name), { recursive: true });
  const s1Real = await realpath(s1);
  await mkdir(path.join(s1, 'a/b'), { recursive: true });
  await mkdir(path.join(s1, 'dest'));
  await writeFile(path.join(s1, 'file.txt'), 'inside root\n');
  await writeFile(path.join(s1, 'a/file.txt'), 'inside a\n');
  await writeFile(path.join(s1, 'a/b/file.txt'), 'inside a/b\n');
  const links: [string, string][] = [
    ['out-file', path.join(outside, 'secret.txt')],
    ['out-dir', outside],
    ['a/out-dir', outside],
    // s1/a/b → s1/a → s1 → servers → data dir → its parent, where the outside folder lies
    ['a/b/out-dir', `../../../../../${path.basename(outside)}`],
    ['a/b/out-file', path.join(outside, 'secret.txt')],
    ['sib', s10],
    ['sib-file', path.join(s10, 'secret.txt')],
    ['sib-rel', '../s10'],
    ['esc', '../../..'],
    ['dangle', path.join(outside, `created-by-attack-${tag}`)],
    ['loop1', 'loop2'],
    ['loop2', 'loop1'],
    ['inside', 'a'],
    ['inside-abs', path.join(s1Real, 'a/b')],
  ];
  for (const [at, target] of links) await symlink(target, path.join(s1, at));
  execFileSync('mkfifo', [path.join(s1, 'fifo')]);
}

// ---------------------------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------------------------

/**
 * Opens the FIFO's other end for a moment, which lets any open(2) blocked on it return: a panel
 * that opened it the blocking way gets its worker thread back, so one hang fails one test only.
 */
function releaseFifo(): void {
  const fifo = path.join(s1, 'fifo');
  if (lstatSync(fifo, { throwIfNoEntry: false })?.isFIFO()) {
    closeSync(openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK));
  }
}

/** Sends one request; one not answered in time (a FIFO opened the blocking way) fails the test. */
async function send(options: InjectOptions, context: string): Promise<LightMyRequestResponse> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      releaseFifo();
      reject(new Error(`${context}: no answer within ${REQUEST_TIMEOUT_MS} ms`));
    }, REQUEST_TIMEOUT_MS);
  });
  try {
    return await Promise.race([panel.app.inject(options), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function describeRequest(options: InjectOptions): string {
  const payload = options.payload;
  const body =
    payload === undefined
      ? ''
      : Buffer.isBuffer(payload)
        ? payload.toString('latin1')
        : JSON.stringify(payload);
  return `${options.method ?? 'GET'} ${typeof options.url === 'string' ? options.url : JSON.stringify(options.url)} ${body}`;
}

/** No answer names a host path that the request did not itself contain. */
function assertNoHostPaths(response: LightMyRequestResponse, sent: string, context: string): void {
  for (const hostPath of [...hostPaths, '/proc/', '/tmp/']) {
    if (sent.includes(hostPath)) continue;
    assert.ok(
      !response.body.includes(hostPath),
      `${context}: the answer shows ${hostPath}: ${response.body.slice(0, 300)}`,
    );
  }
}

function assertOutcome(response: LightMyRequestResponse, outcome: Outcome, context: string): void {
  const summary = `${context}: ${response.statusCode} ${response.body.slice(0, 300)}`;
  assert.ok(response.statusCode < 500, `never a 5xx; ${summary}`);
  if (outcome === 'ok') {
    assert.equal(response.statusCode, 200, summary);
    return;
  }
  if (isStored(outcome)) {
    assert.equal(response.statusCode, 200, summary);
    const stored = json<{ data: { path: string; type: string }[] }>(response).data;
    assert.deepEqual(
      stored.map((entry) => [entry.path, entry.type]),
      [[outcome.stored, 'file']],
      summary,
    );
    return;
  }
  const codes: readonly string[] = typeof outcome === 'string' ? [outcome] : outcome;
  const body = json<{ code: string; statusCode: number; message: unknown }>(response);
  assert.ok(codes.includes(body.code), `expected ${codes.join(' or ')}; ${summary}`);
  assert.equal(response.statusCode, STATUS[body.code as Code], summary);
  assert.equal(body.statusCode, response.statusCode, summary);
  assert.equal(typeof body.message, 'string', summary);
}

/** Runs every operation with `hostile`, checking the answer, the outside and the inside. */
async function attack(hostile: Hostile): Promise<void> {
  // Each case starts from the fixture, even if the one before failed halfway.
  if (!isDeepStrictEqual(await tree(s1), pristine)) await buildFixture();
  for (const operation of OPERATIONS) {
    const outcome = expected(hostile, operation);
    const options = operation.request(hostile);
    const context = `${hostile.label} × ${operation.name} (${describeRequest(options).slice(0, 160)})`;
    const response = await send(options, context);
    assertOutcome(response, outcome, context);
    assertNoHostPaths(response, `${describeRequest(options)} ${hostile.value}`, context);
    await assertOutsideUnchanged(context);
    const inside = await tree(s1);
    if (isRefusal(outcome)) {
      assert.deepEqual(
        inside,
        pristine,
        `${context}: a refused request changed the server directory`,
      );
      continue;
    }
    if (isStored(outcome)) {
      // The upload landed inside as a regular file: a symlink of that name was replaced, not followed.
      const stored = path.join(s1, outcome.stored);
      assert.ok((await lstat(stored)).isFile(), context);
      assert.equal(await readFile(stored, 'utf8'), ATTACK, context);
    }
    if (!isDeepStrictEqual(inside, pristine)) await buildFixture();
  }
}

/** A GET as the attacker, answered with 200 and returning its body's `data`. */
async function getData<T>(url: string): Promise<T> {
  const response = await send({ method: 'GET', url, headers: player.headers }, url);
  assert.equal(response.statusCode, 200, `${url}: ${response.body}`);
  return json<{ data: T }>(response).data;
}

interface ListedEntry {
  name: string;
  path: string;
  type: string;
  size: number;
}

// ---------------------------------------------------------------------------------------------
// The suite
// ---------------------------------------------------------------------------------------------

describe('file manager security', () => {
  after(() => {
    releaseFifo(); // should an open of it still be blocked, the panel could not close
  });
  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite);
    const admin = await register(panel, 'admin');
    player = await register(panel, 'player');
    await createServer(panel, admin, 's1');
    await createServer(panel, admin, 's10');
    const access = await panel.app.inject({
      method: 'PUT',
      url: '/api/users/player/servers',
      headers: admin.headers,
      payload: { servers: ['s1'] },
    });
    assert.equal(access.statusCode, 200, access.body);

    serversDir = panel.config.serversDir;
    s1 = path.join(serversDir, 's1');
    s10 = path.join(serversDir, 's10');
    outside = await mkdtemp(path.join(path.dirname(panel.dataDir), 'outside-'));
    hostPaths = [
      panel.dataDir,
      serversDir,
      outside,
      await realpath(panel.dataDir),
      await realpath(outside),
    ];

    // Bait, named like what the race writes, so that an overwrite would show in the hashes.
    for (const [root, secret] of [
      [outside, OUTSIDE_SECRET],
      [s10, SIBLING_SECRET],
    ] as const) {
      await mkdir(path.join(root, 'sub'));
      for (const name of ['secret.txt', 'target.txt', 'victim.txt', 'sub/deep.txt']) {
        await writeFile(path.join(root, name), secret);
      }
    }
    await writeFile(path.join(outside, 'only-outside.txt'), OUTSIDE_SECRET);

    await buildFixture();
    pristine = await tree(s1);
    baseline = await outsideState();
  });

  after(async () => {
    await rm(outside, { recursive: true, force: true });
  });

  describe('every operation refuses every hostile path, and nothing outside changes', () => {
    for (const hostile of HOSTILE) {
      it(hostile.label, () => attack(materialize(hostile)));
    }
  });

  it('refuses another server by name: only `s1` is the attacker’s', async () => {
    await buildFixture();
    const urls = [
      '/api/servers/s10/files?path=',
      '/api/servers/s10/files/content?path=secret.txt',
      '/api/servers/..%2Fs10/files/content?path=secret.txt',
      '/api/servers/s1%2F..%2Fs10/files/content?path=secret.txt',
      '/api/servers/s1%2F..%2F..%2Fservers%2Fs10/files/content?path=secret.txt',
      '/api/servers/%2e%2e/files?path=servers/s10',
      '/api/servers/s1%00/files?path=',
    ];
    for (const url of urls) {
      const response = await send({ method: 'GET', url, headers: player.headers }, url);
      assert.ok([400, 403, 404].includes(response.statusCode), `${url}: ${response.body}`);
      assert.ok(!response.body.includes('S10 SECRET'), url);
      assertNoHostPaths(response, url, url);
    }
    const write = await send(
      {
        method: 'PUT',
        url: '/api/servers/s10/files/content?path=secret.txt',
        headers: player.headers,
        payload: { content: ATTACK },
      },
      's10 write',
    );
    assert.equal(write.statusCode, 403, write.body);
    await assertOutsideUnchanged('another server by name');
  });

  it('keeps the legitimate cases working: inside symlinks, `....`, encoded names, lexical `..`', async () => {
    await buildFixture();
    const read = (raw: string) =>
      getData<{ content: string }>(`${BASE}/content?path=${raw}`).then((data) => data.content);
    assert.equal(await read('inside/file.txt'), 'inside a\n');
    assert.equal(await read('inside-abs/file.txt'), 'inside a/b\n');
    assert.equal(await read('inside/b/file.txt'), 'inside a/b\n');
    assert.equal(await read('%2Fa%2Ffile.txt'), 'inside a\n', 'a leading slash is the root');
    assert.equal(await read('a%5Cb%5Cfile.txt'), 'inside a/b\n', 'backslashes are slashes');
    assert.equal(await read('a/b/../file.txt'), 'inside a\n');
    // `..` is taken lexically: after an outside symlink it comes back to the folder holding it.
    assert.equal(await read('a/out-dir/../file.txt'), 'inside a\n');

    const download = await send(
      { method: 'GET', url: `${BASE}/download?path=inside/file.txt`, headers: player.headers },
      'download through an inside symlink',
    );
    assert.equal(download.statusCode, 200, download.body);
    assert.equal(download.body, 'inside a\n');

    // `....` is a name; `%2e%2e` arriving once-decoded from `%252e%252e` is a name too.
    for (const [folder, raw] of [
      ['....', '....//x.txt'],
      ['%2e%2e', '%252e%252e/x.txt'],
    ] as const) {
      const created = await send(
        {
          method: 'POST',
          url: `${BASE}/create`,
          headers: player.headers,
          payload: { type: 'folder', name: folder, path: '' },
        },
        `create ${folder}`,
      );
      assert.equal(created.statusCode, 200, created.body);
      const saved = await send(
        {
          method: 'PUT',
          url: `${BASE}/content?path=${raw}`,
          headers: player.headers,
          payload: { content: `in ${folder}` },
        },
        `write ${raw}`,
      );
      assert.equal(saved.statusCode, 200, saved.body);
      assert.equal(await readFile(path.join(s1, folder, 'x.txt'), 'utf8'), `in ${folder}`);
      assert.equal(await read(raw), `in ${folder}`);
    }

    // Writing through an inside symlink writes inside.
    const through = await send(
      {
        method: 'PUT',
        url: `${BASE}/content?path=inside/new.txt`,
        headers: player.headers,
        payload: { content: 'through inside' },
      },
      'write through an inside symlink',
    );
    assert.equal(through.statusCode, 200, through.body);
    assert.equal(await readFile(path.join(s1, 'a/new.txt'), 'utf8'), 'through inside');
    await assertOutsideUnchanged('legitimate cases');
  });

  it('lists symlinks as symlinks and never shows what an outside one points to', async () => {
    await buildFixture();
    const root = await getData<ListedEntry[]>(`${BASE}?path=`);
    const types = Object.fromEntries(root.map((entry) => [entry.name, entry.type]));
    for (const link of [
      'out-file',
      'out-dir',
      'sib',
      'sib-file',
      'sib-rel',
      'esc',
      'dangle',
      'loop1',
      'loop2',
      'inside',
      'inside-abs',
    ]) {
      assert.equal(types[link], 'symlink', link);
    }
    assert.equal(types.a, 'folder');
    assert.equal(types['file.txt'], 'file');
    assert.equal(types.fifo, undefined, 'a FIFO is not listed');
    const outFile = root.find((entry) => entry.name === 'out-file');
    assert.equal(outFile?.size, path.join(outside, 'secret.txt').length, "a symlink's own size");

    // `inside` is a symlink to the folder `a`: listing it lists `a`.
    const viaLink = await getData<ListedEntry[]>(`${BASE}?path=inside`);
    const direct = await getData<ListedEntry[]>(`${BASE}?path=a`);
    assert.deepEqual(
      viaLink.map((entry) => [entry.name, entry.type]),
      direct.map((entry) => [entry.name, entry.type]),
    );
    assert.deepEqual(
      direct.map((entry) => [entry.name, entry.type]),
      [
        ['b', 'folder'],
        ['file.txt', 'file'],
        ['out-dir', 'symlink'],
      ],
    );
    const lexical = await getData<ListedEntry[]>(`${BASE}?path=a/out-dir/..`);
    assert.deepEqual(
      lexical,
      direct,
      '`a/out-dir/..` is `a`, not the parent of the outside folder',
    );

    for (const folder of ['', 'a', 'a/b', 'inside', 'inside-abs', 'dest']) {
      const listing = JSON.stringify(await getData<ListedEntry[]>(`${BASE}?path=${folder}`));
      for (const bait of ['only-outside.txt', 'secret.txt', 'deep.txt', 'victim.txt']) {
        assert.ok(!listing.includes(bait), `listing "${folder}" shows ${bait} from outside`);
      }
    }
  });

  it('deletes a folder full of outward symlinks without touching what they point to', async () => {
    await buildFixture();
    for (const folder of ['a', 'inside-abs', '.']) {
      const response = await send(
        { method: 'DELETE', url: `${BASE}?path=${folder}`, headers: player.headers },
        `delete ${folder}`,
      );
      if (folder === '.') assert.equal(response.statusCode, 400, response.body);
      else assert.equal(response.statusCode, 200, response.body);
      await assertOutsideUnchanged(`delete ${folder}`);
    }
    assert.equal(existsSync(path.join(s1, 'a')), false);
    // Moving the outward links around keeps them links: following them is still refused.
    for (const [source, destination] of [
      ['out-dir', 'dest'],
      ['esc', 'dest'],
      ['out-file', 'dest/renamed'],
    ] as const) {
      const moved = await send(
        {
          method: 'POST',
          url: `${BASE}/move`,
          headers: player.headers,
          payload: { source, destination },
        },
        `move ${source}`,
      );
      assert.equal(moved.statusCode, 200, moved.body);
      assert.equal(json<{ data: { type: string } }>(moved).data.type, 'symlink');
    }
    for (const through of [
      'dest/out-dir/secret.txt',
      'dest/renamed',
      `dest/esc/${path.basename(outside)}/secret.txt`,
    ]) {
      const response = await send(
        { method: 'GET', url: `${BASE}/content?path=${through}`, headers: player.headers },
        through,
      );
      assert.equal(response.statusCode, 403, `${through}: ${response.body}`);
    }
    await assertOutsideUnchanged('moved links');
  });

  it('refuses to delete, rename, move or overwrite the root in any spelling', async () => {
    await buildFixture();
    for (const root of ['', '.', '/', './', '\\', 'a/..', 'a/b/../..', 'inside/..']) {
      const q = encodeURIComponent(root);
      const requests: InjectOptions[] = [
        { method: 'DELETE', url: `${BASE}?path=${q}`, headers: player.headers },
        { method: 'PUT', url: `${BASE}/rename?old_path=${q}&new_name=x`, headers: player.headers },
        {
          method: 'POST',
          url: `${BASE}/move`,
          headers: player.headers,
          payload: { source: root, destination: 'dest' },
        },
        {
          method: 'PUT',
          url: `${BASE}/content?path=${q}`,
          headers: player.headers,
          payload: { content: ATTACK },
        },
      ];
      for (const options of requests) {
        const response = await send(options, describeRequest(options));
        assert.equal(response.statusCode, 400, `${describeRequest(options)}: ${response.body}`);
      }
      assert.deepEqual(await tree(s1), pristine, `root spelled ${JSON.stringify(root)}`);
    }
    await assertOutsideUnchanged('the root');
  });

  describe('a folder swapped for a symlink to the outside while the API works in it', () => {
    const statuses = new Map<string, number>();
    const serverErrors: string[] = [];

    it('never writes or reads outside', async (t) => {
      await buildFixture();
      const race = path.join(s1, 'race');
      await mkdir(path.join(race, 'sub'), { recursive: true });
      for (const name of ['target.txt', 'victim.txt', 'sub/deep.txt']) {
        await writeFile(path.join(race, name), 'inside the race folder\n');
      }
      for (let index = 0; index < 2000; index += 1) {
        await writeFile(path.join(s1, `movable-${index}`), 'movable\n');
      }

      const child = spawn(
        process.execPath,
        [
          SWAPPER,
          race,
          String(RACE_MS),
          outside,
          `../../../${path.basename(outside)}`,
          s10,
          '../s10',
        ],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      let output = '';
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (chunk: string) => (output += chunk));
      const closed = new Promise<number | null>((resolve) => child.once('close', resolve));

      const leaks: string[] = [];
      const unexpected: string[] = [];
      let sent = 0;
      const requestFor = (index: number): InjectOptions => {
        const h = player.headers;
        switch (index % 14) {
          case 0:
            return {
              method: 'PUT',
              url: `${BASE}/content?path=race/target.txt`,
              headers: h,
              payload: { content: ATTACK },
            };
          case 1:
            return {
              method: 'PUT',
              url: `${BASE}/content?path=race/sub/deep.txt`,
              headers: h,
              payload: { content: ATTACK },
            };
          case 2:
            return {
              method: 'POST',
              url: `${BASE}/create`,
              headers: h,
              payload: { type: 'file', name: `c-${index}`, path: 'race' },
            };
          case 3:
            return {
              method: 'POST',
              url: `${BASE}/create`,
              headers: h,
              payload: { type: 'folder', name: `d-${index}`, path: 'race/sub' },
            };
          case 4:
            return upload(`${BASE}/upload?path=race`, 'target.txt');
          case 5:
            return upload(`${BASE}/upload?path=race/sub`, 'deep.txt');
          case 6:
            return {
              method: 'PUT',
              url: `${BASE}/rename?old_path=race/c-${index - 4}&new_name=r-${index}`,
              headers: h,
            };
          case 7:
            return {
              method: 'POST',
              url: `${BASE}/move`,
              headers: h,
              payload: { source: `movable-${index % 2000}`, destination: 'race/sub' },
            };
          case 8:
            return {
              method: 'POST',
              url: `${BASE}/move`,
              headers: h,
              payload: { source: `race/r-${index - 2}`, destination: 'race/sub' },
            };
          case 9:
            return {
              method: 'PUT',
              url: `${BASE}/content?path=race/victim.txt`,
              headers: h,
              payload: { content: ATTACK },
            };
          case 10:
            return { method: 'DELETE', url: `${BASE}?path=race/victim.txt`, headers: h };
          case 11:
            return { method: 'GET', url: `${BASE}/content?path=race/target.txt`, headers: h };
          case 12:
            return { method: 'GET', url: `${BASE}/download?path=race/sub/deep.txt`, headers: h };
          default:
            return { method: 'GET', url: `${BASE}?path=race`, headers: h };
        }
      };
      // The swapper stops by itself after RACE_MS.
      while (child.exitCode === null) {
        const batch = Array.from({ length: 28 }, () => requestFor(sent++));
        await Promise.all(
          batch.map(async (options) => {
            const what = describeRequest(options).slice(0, 120);
            const response = await send(options, what);
            const code =
              response.statusCode === 200 || response.statusCode >= 500
                ? ''
                : json<{ code: string }>(response).code;
            const key = `${response.statusCode} ${code}`.trim();
            statuses.set(key, (statuses.get(key) ?? 0) + 1);
            if (response.statusCode >= 500) serverErrors.push(`${what}: ${response.body}`);
            else if (![200, 400, 403, 404, 409].includes(response.statusCode)) {
              unexpected.push(`${what}: ${response.statusCode} ${response.body}`);
            }
            if (/OUTSIDE SECRET|S10 SECRET|only-outside/.test(response.body)) {
              leaks.push(`${what}: ${response.body.slice(0, 200)}`);
            }
            assertNoHostPaths(response, what, what);
          }),
        );
      }
      const exitCode = await closed;
      assert.equal(exitCode, 0, output);
      const { swaps } = JSON.parse(output) as { swaps: number };

      assert.deepEqual(leaks, [], 'nothing outside was ever read');
      assert.deepEqual(
        unexpected,
        [],
        'only 200, 400, 403, 404, 409 (and the 5xx of the next test)',
      );
      await assertOutsideUnchanged(`after ${swaps} swaps and ${sent} requests`);
      assert.ok((await lstat(race)).isDirectory(), 'the swapper left the real folder in place');
      assert.equal(existsSync(`${race}.real`), false);

      // The race really happened: thousands of swaps, writes that landed and writes refused.
      t.diagnostic(
        `${swaps} swaps, ${sent} requests: ${JSON.stringify(Object.fromEntries(statuses))}`,
      );
      assert.ok(swaps >= 1000, `only ${swaps} swaps`);
      assert.ok((statuses.get('200') ?? 0) > 0, JSON.stringify([...statuses]));
      assert.ok((statuses.get('403 PATH_OUTSIDE') ?? 0) > 0, JSON.stringify([...statuses]));
    });

    it('answers no 5xx meanwhile', () => {
      assert.deepEqual(serverErrors.slice(0, 5), [], `${serverErrors.length} answers were 5xx`);
    });
  });

  it('leaves the number of open file descriptors unchanged after two thousand refused requests', async (t) => {
    await buildFixture();
    const refused: [InjectOptions, number][] = [
      [{ method: 'GET', url: `${BASE}/content?path=fifo` }, 400],
      [{ method: 'GET', url: `${BASE}/download?path=fifo` }, 400],
      [{ method: 'GET', url: `${BASE}/download?path=inside/../fifo` }, 400],
      [{ method: 'GET', url: `${BASE}/download?path=out-file` }, 403],
      [{ method: 'GET', url: `${BASE}/content?path=a/out-dir/secret.txt` }, 403],
      [
        {
          method: 'PUT',
          url: `${BASE}/content?path=a/b/out-dir/x.txt`,
          payload: { content: ATTACK },
        },
        403,
      ],
      [{ method: 'GET', url: `${BASE}?path=loop1` }, 400],
      [{ method: 'GET', url: `${BASE}/content?path=missing/x.txt` }, 404],
      [{ method: 'GET', url: `${BASE}/download?path=a/missing.txt` }, 404],
      [{ method: 'GET', url: `${BASE}/content?path=a` }, 400],
      [
        {
          method: 'POST',
          url: `${BASE}/create`,
          payload: { type: 'file', name: 'x', path: 'out-dir' },
        },
        403,
      ],
      [{ method: 'DELETE', url: `${BASE}?path=esc/x` }, 403],
      [{ method: 'GET', url: `${BASE}/content?path=a%00b` }, 400],
      [
        { method: 'GET', url: `${BASE}/download?path=file.txt`, headers: { range: 'bytes=9999-' } },
        416,
      ],
      [upload(`${BASE}/upload?path=sib`, 'x.txt'), 403],
    ];
    const round = async (count: number): Promise<void> => {
      for (let start = 0; start < count; start += 50) {
        await Promise.all(
          Array.from({ length: Math.min(50, count - start) }, async (_, offset) => {
            const [options, status] = refused[(start + offset) % refused.length]!;
            const what = describeRequest(options).slice(0, 120);
            const response = await send(
              { ...options, headers: { ...player.headers, ...options.headers } },
              what,
            );
            assert.equal(response.statusCode, status, `${what}: ${response.body}`);
          }),
        );
      }
    };
    const openFds = (): number => readdirSync('/proc/self/fd').length;
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => {
      warnings.push(warning.message);
    };
    process.on('warning', onWarning);
    try {
      await round(200); // warm up: database connections, lazy modules
      const before = openFds();
      await round(1000);
      const middle = openFds();
      await round(1000);
      const afterAll = openFds();
      t.diagnostic(`open descriptors: ${before}, ${middle} after 1000, ${afterAll} after 2000`);
      assert.ok(
        Math.abs(middle - before) <= 2,
        `descriptors: ${before} before, ${middle} after 1000`,
      );
      assert.ok(
        afterAll - middle <= 2,
        `descriptors: ${middle} after 1000, ${afterAll} after 2000`,
      );
      assert.ok(afterAll - before <= 2, `descriptors: ${before} before, ${afterAll} after 2000`);
    } finally {
      process.off('warning', onWarning);
    }
    assert.deepEqual(
      warnings.filter((message) => /file descriptor|FileHandle/i.test(message)),
      [],
      'no file handle was left for the garbage collector to close',
    );
    assert.deepEqual(await tree(s1), pristine);
    await assertOutsideUnchanged('descriptor test');
  });
});
