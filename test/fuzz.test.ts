/**
 * Property-based fuzzing (fast-check) of every route, driven by the panel's own route list
 * (`app.registeredRoutes`) and OpenAPI document (`app.swagger()`), so a new route is fuzzed
 * without touching this file. Path parameters, query strings, JSON bodies, content types,
 * credentials and multipart uploads are random and hostile: wrong types, huge strings, deep
 * nesting, Unicode, NUL, prototype keys. Whatever arrives, the panel answers below 500 within
 * 5 s, and afterwards it is still healthy, `Object.prototype` is untouched and uploads left
 * nothing outside the server directory and no temporary file inside it.
 *
 * Requests go as the admin (past the access checks, into validation and the handlers) unless a
 * property says otherwise. Each property prints its seed (`FUZZ_SEED=<seed>` replays every
 * property of the file; fast-check also prints the seed and path of a failure).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { lstat, mkdir, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, afterEach, before, describe, it, type TestContext } from 'node:test';
import * as fc from 'fast-check';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { SignJWT } from 'jose';
import { stringify as toYaml } from 'yaml';
import { TEST_JWT_SECRET, startPanel, suiteScope, type TestPanel } from './helpers/app.js';
import {
  PASSWORD,
  createServer,
  gameServerCommand,
  eventually,
  json,
  login,
  register,
  type Session,
} from './helpers/factories.js';

/** Every request must be answered within this time. */
const REQUEST_TIMEOUT_MS = 5_000;
const BODY_LIMIT = 1024 * 1024;
/** Replays a failure: the same seed for every property of this file. */
const FIXED_SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);
/**
 * `FUZZ_COLLECT=1`: for finding bugs rather than guarding against them. No property stops at its
 * first failure; every 5xx is listed at the end with the error the panel logged for it.
 */
const COLLECT = process.env.FUZZ_COLLECT === '1';
/** `FUZZ_SCALE=10`: ten times the runs of every property, for a long hunt. */
const SCALE = Number(process.env.FUZZ_SCALE ?? 1);

/** Unique per run, so "nothing escaped the server directory" can look for these names. */
const TAG = randomBytes(4).toString('hex');
const ESCAPE_NAME = `fuzz-escape-${TAG}`;

const ADMIN = 'fuzz-admin';
const USER = 'fuzz-user';
/** The target of `/api/users/:username/…`, so the admin and the user keep their roles. */
const VICTIM = 'fuzz-victim';
/**
 * Signs in at the end and is never used by the fuzzing: wrong current passwords sent to
 * `/api/profile/*` count as failed logins of the caller, so the admin may well be throttled.
 */
const WITNESS = 'fuzz-witness';
const SERVER = 's1';
/** A second server whose directory no request may change. */
const SIBLING = 's10';
const PROVIDER = 'fuzzidp';

/** Keys that pollute a prototype when merged carelessly; checked on Object.prototype at the end. */
const PROTO_KEYS = ['__proto__', 'constructor', 'prototype'] as const;
const POLLUTION_MARKERS = ['polluted', 'isAdmin', 'fuzzPolluted', 'role', 'admin'];
/** Text no answer may ever contain: host files, the panel's package.json, its JWT secret. */
const LEAK_MARKERS = ['root:x:0:0', '"devDependencies"', TEST_JWT_SECRET];

// ---------------------------------------------------------------------------------------------
// Requests

type Identity =
  'admin' | 'user' | 'anonymous' | { readonly authorization: string; readonly label: string };

interface Req {
  readonly method: string;
  readonly url: string;
  readonly as: Identity;
  readonly headers: Readonly<Record<string, string>>;
  readonly payload?: string | Buffer;
  readonly remoteAddress: string;
  /** Longer than REQUEST_TIMEOUT_MS for requests that legitimately do much work. */
  readonly timeoutMs?: number;
}

const clip = (text: string, max = 240): string =>
  text.length <= max ? text : `${text.slice(0, max)}…(${text.length} chars)`;

function describeRequest(req: Req): string {
  const who = typeof req.as === 'string' ? req.as : req.as.label;
  const headers = Object.entries(req.headers).map(([name, value]) => [name, clip(value, 120)]);
  let body = '';
  if (typeof req.payload === 'string') body = ` body=${JSON.stringify(clip(req.payload))}`;
  else if (req.payload) {
    body = ` body=<${req.payload.length} bytes> ${JSON.stringify(clip(req.payload.toString('latin1')))}`;
  }
  return `${req.method} ${JSON.stringify(clip(req.url, 400))} as ${who} from ${req.remoteAddress} headers=${JSON.stringify(Object.fromEntries(headers))}${body}`;
}

/** Gives a generated request a short printed form, so counterexamples stay readable. */
function printable(req: Req): Req {
  return Object.defineProperty(req, fc.toStringMethod, { value: () => describeRequest(req) });
}

/** A client address per request: login failures are throttled per address (50). */
const remoteAddress = fc
  .tuple(fc.integer({ min: 0, max: 255 }), fc.integer({ min: 1, max: 254 }))
  .map(([a, b]) => `10.77.${a}.${b}`);

/** Percent-encodes the UTF-8 bytes of `text` (lone surrogates become U+FFFD, never a throw). */
function percentEncode(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const char = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-_.~]/.test(char)
      ? char
      : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Values

const LONG = 10_000;

/** Strings that have broken servers before, in one place. */
const HOSTILE_STRINGS: readonly string[] = [
  '',
  ' ',
  '.',
  '..',
  '../',
  '../../../../etc/passwd',
  `../../../../${ESCAPE_NAME}`,
  '..\\..\\..\\windows\\win.ini',
  '/',
  '//',
  '/./../',
  '%00',
  '\u0000',
  'a\u0000b',
  '\u0000'.repeat(50),
  '%2e%2e%2f',
  '%252e%252e%252f',
  '..%2f..%2f',
  '__proto__',
  'constructor',
  'prototype',
  '__proto__.polluted',
  'constructor.prototype.polluted',
  'toString',
  'hasOwnProperty',
  'valueOf',
  '\u202e',
  'abc\u202edef\u200f',
  '\u200b',
  '\ufeff',
  '\ufffe',
  '\uffff',
  '😀',
  '👨‍👩‍👧‍👦',
  '\ud800',
  '\udfff',
  'a\ud800b',
  '\udc00\ud800',
  'Ａｄｍｉｎ',
  'İ',
  'ß',
  'ǅ',
  'e\u0301',
  'Z̤͔ͧ̑̓ä͖̭̈̇lͮ̒ͫǫ̗',
  '\r\n',
  '\n',
  '\r',
  '\t',
  '\u0007\u001b[31m',
  '\u007f',
  '\u0085',
  '\u2028\u2029',
  "' OR '1'='1",
  "'; DROP TABLE users; --",
  '"',
  "'",
  '\\',
  '\\u0000',
  '$(reboot)',
  '`id`',
  '| rm -rf /',
  '<script>alert(1)</script>',
  '{{7*7}}',
  '${jndi:ldap://x}',
  'NaN',
  'Infinity',
  '-Infinity',
  '-1',
  '0',
  '-0',
  '1.5',
  '1e309',
  '0x10',
  '9007199254740993',
  '2147483648',
  '-2147483649',
  '99999999999999999999999999',
  'null',
  'undefined',
  'true',
  '[]',
  '{}',
  '[object Object]',
  'CON',
  'nul',
  'COM1',
  '.panel-tmp-1234',
  '~',
  '*',
  '?',
  '#',
  '&',
  '=',
  ';',
  '%',
  '%%',
  '%E0%A4%A',
  '+',
  'a'.repeat(256),
  'x'.repeat(LONG),
  'é'.repeat(LONG / 2),
  '😀'.repeat(LONG / 4),
  'a/'.repeat(LONG / 2),
  '../'.repeat(LONG / 3),
  '\u0000'.repeat(LONG),
];

/** Random text of every kind, hostile text, and the two mixed. */
const text: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
  { weight: 4, arbitrary: fc.constantFrom(...HOSTILE_STRINGS) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.string({ maxLength: 10 }), fc.constantFrom(...HOSTILE_STRINGS))
      .map(([a, b]) => a + b),
  },
);

/** Any JSON value, with hostile extremes. */
const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 2, arbitrary: text },
  {
    weight: 2,
    arbitrary: fc.constantFrom<unknown>(
      null,
      true,
      false,
      0,
      -0,
      -1,
      1.5,
      2 ** 31,
      2 ** 53 + 2,
      -(2 ** 63),
      1e308,
      -1e308,
      5e-324,
      [],
      {},
      [null],
      [[[]]],
      { '': '' },
      ['a', 1, null],
    ),
  },
);

// ---------------------------------------------------------------------------------------------
// Eggs: the public library (test/fixtures/eggs), changed in random places

type EggPath = readonly (string | number)[];

/** Its JSON eggs, read once. */
const LIBRARY_EGGS: readonly unknown[] = (() => {
  const root = path.join(import.meta.dirname, 'fixtures', 'eggs');
  return readdirSync(root, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.json'))
    .sort()
    .map((file) => JSON.parse(readFileSync(path.join(root, file), 'utf8')) as unknown);
})();

/** Every place in `value`, itself first. */
function placesIn(value: unknown, at: EggPath = [], out: EggPath[] = []): EggPath[] {
  out.push(at);
  if (Array.isArray(value)) value.forEach((item, i) => placesIn(item, [...at, i], out));
  else if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) placesIn(item, [...at, key], out);
  }
  return out;
}

/** `egg` with the value at `place` replaced (the egg itself for the empty path). */
function replacedAt(egg: unknown, place: EggPath, value: unknown): unknown {
  if (place.length === 0) return value;
  const copy = structuredClone(egg) as Record<string | number, unknown>;
  let at = copy;
  for (const step of place.slice(0, -1)) at = at[step] as Record<string | number, unknown>;
  at[place.at(-1) ?? ''] = value;
  return copy;
}

/** What eggs write that the importer interprets, and near misses of it. */
const EGG_STRINGS: readonly string[] = [
  '/',
  '//x.cfg',
  '/../x.cfg',
  '\\x.ini',
  'C:\\x.ini',
  'yml',
  'YML',
  'int',
  'nullable:string',
  'nullable:',
  'required|string|',
  'gt:0',
  'gt:environment.__proto__',
  'lte:environment.MAX_PLAYERS',
  'ends_with:',
  'starts_with:,',
  '{{server.build.env.hostname}}',
  '{{env.__proto__}}',
  '{{constructor}}',
  '$hostname ${hostname:-x} ${#HOSTNAME}',
  'hostname',
  'HOSTNAME',
  '__proto__',
  'constructor',
];

// ---------------------------------------------------------------------------------------------
// Schemas (as in the OpenAPI document)

interface Schema {
  readonly type?: string;
  readonly enum?: readonly unknown[];
  readonly anyOf?: readonly Schema[];
  readonly properties?: Readonly<Record<string, Schema>>;
  readonly required?: readonly string[];
  readonly items?: Schema;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly maxItems?: number;
  readonly pattern?: string;
  readonly nullable?: boolean;
}

interface Parameter {
  readonly name: string;
  readonly in: string;
  readonly schema?: Schema;
}

interface Operation {
  readonly parameters?: readonly Parameter[];
  readonly requestBody?: { readonly content?: Record<string, { readonly schema?: Schema }> };
}

/** A string that the schema accepts, mostly; sometimes hostile text or its length limits. */
function stringFor(schema: Schema): fc.Arbitrary<string> {
  const minLength = schema.minLength ?? 0;
  const maxLength = Math.min(schema.maxLength ?? 60, 60);
  let base: fc.Arbitrary<string> = fc.string({
    minLength,
    maxLength: Math.max(minLength, maxLength),
  });
  if (schema.pattern !== undefined) {
    try {
      // fast-check cannot generate lookaheads; the rest of the pattern still gives good values.
      const pattern = new RegExp(schema.pattern.replace(/\(\?[!=][^)]*\)/g, ''));
      base = fc
        .stringMatching(pattern)
        .filter((value) => value.length >= minLength && value.length <= (schema.maxLength ?? 1e9));
    } catch {
      // keep the plain string
    }
  }
  const edges: string[] = [];
  if (schema.maxLength !== undefined) {
    edges.push('a'.repeat(schema.maxLength), 'a'.repeat(schema.maxLength + 1));
  }
  if (schema.minLength !== undefined && schema.minLength > 0) {
    edges.push('a'.repeat(schema.minLength - 1));
  }
  return fc.oneof(
    { weight: 5, arbitrary: base },
    { weight: 2, arbitrary: text },
    { weight: 1, arbitrary: edges.length > 0 ? fc.constantFrom(...edges) : text },
  );
}

/** Values of the schema's shape, mostly valid, with edges and hostile strings inside. */
function fromSchema(schema: Schema | undefined): fc.Arbitrary<unknown> {
  if (schema === undefined) return anyJson;
  if (schema.anyOf) return fc.oneof(...schema.anyOf.map((item) => fromSchema(item)));
  if (schema.enum) return fc.constantFrom(...schema.enum);
  let arbitrary: fc.Arbitrary<unknown>;
  switch (schema.type) {
    case 'string':
      arbitrary = stringFor(schema);
      break;
    case 'integer': {
      const min = schema.minimum ?? -(2 ** 31);
      const max = schema.maximum ?? 2 ** 31;
      arbitrary = fc.oneof(
        { weight: 4, arbitrary: fc.integer({ min, max }) },
        { weight: 1, arbitrary: fc.constantFrom(min - 1, max + 1, min, max, 2 ** 53 + 2) },
      );
      break;
    }
    case 'number':
      arbitrary = fc.double({ noNaN: true, noDefaultInfinity: true });
      break;
    case 'boolean':
      arbitrary = fc.boolean();
      break;
    case 'array': {
      const items = fromSchema(schema.items);
      arbitrary = fc.oneof(
        { weight: 5, arbitrary: fc.array(items, { maxLength: 5 }) },
        {
          weight: 1,
          arbitrary:
            schema.maxItems === undefined
              ? fc.array(items, { maxLength: 50 })
              : // One item too many; small items only, or 10,001 huge strings pass 512 MB.
                items
                  .filter((item) => JSON.stringify([item]).length <= 1024)
                  .map((item) => Array.from({ length: schema.maxItems! + 1 }, () => item)),
        },
      );
      break;
    }
    case 'object': {
      const properties = schema.properties ?? {};
      const model = Object.fromEntries(
        Object.entries(properties).map(([key, value]) => [key, fromSchema(value)]),
      );
      arbitrary = fc.record(model, { requiredKeys: [...(schema.required ?? [])] });
      break;
    }
    default:
      arbitrary = anyJson;
  }
  return schema.nullable ? fc.option(arbitrary, { nil: null }) : arbitrary;
}

/** A plain object whose keys may be `__proto__` & co. as own properties (as JSON.parse makes). */
function withKeys(base: unknown, entries: readonly (readonly [string, unknown])[]): unknown {
  const target: Record<string, unknown> =
    typeof base === 'object' && base !== null && !Array.isArray(base)
      ? (JSON.parse(JSON.stringify(base)) as Record<string, unknown>)
      : {};
  for (const [key, value] of entries) {
    Object.defineProperty(target, key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return target;
}

const prototypePayload = fc.constantFrom<unknown>(
  { polluted: 'yes' },
  { isAdmin: true, role: 'admin' },
  withKeys({}, [['prototype', { polluted: 'yes' }]]),
  withKeys({}, [['__proto__', { fuzzPolluted: 'yes' }]]),
  null,
  'polluted',
);

const extraKey: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...PROTO_KEYS) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('toString', 'valueOf', 'hasOwnProperty', '__defineGetter__', 'then'),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom('role', 'id', 'admin', 'owner', 'user_id', 'password_hash'),
  },
  { weight: 2, arbitrary: text },
);

/** A JSON body for a route: its schema's shape, broken in every way, or anything at all. */
function jsonBody(schema: Schema | undefined): fc.Arbitrary<string> {
  const valid = fromSchema(schema);
  const keys = Object.keys(schema?.properties ?? {});
  return fc.oneof(
    // Valid-looking values, straight.
    { weight: 3, arbitrary: valid.map((value) => JSON.stringify(value)) },
    // One field of the wrong type (or every field, for a body that is not an object).
    {
      weight: 3,
      arbitrary: fc
        .tuple(valid, keys.length > 0 ? fc.constantFrom(...keys) : fc.constant(''), anyJson)
        .map(([value, key, wrong]) =>
          JSON.stringify(key === '' ? wrong : withKeys(value, [[key, wrong]])),
        ),
    },
    // Extra keys, prototype keys above all.
    {
      weight: 3,
      arbitrary: fc
        .tuple(
          valid,
          fc.array(fc.tuple(extraKey, fc.oneof(prototypePayload, anyJson)), {
            minLength: 1,
            maxLength: 3,
          }),
        )
        .map(([value, entries]) => JSON.stringify(withKeys(value, entries))),
    },
    // Prototype keys one level down, in every field.
    {
      weight: 1,
      arbitrary: fc
        .tuple(valid, keys.length > 0 ? fc.constantFrom(...keys) : fc.constant('a'), extraKey)
        .map(([value, key, proto]) =>
          JSON.stringify(withKeys(value, [[key, withKeys({}, [[proto, { polluted: 'yes' }]])]])),
        ),
    },
    // Anything at all.
    { weight: 2, arbitrary: anyJson.map((value) => JSON.stringify(value)) },
    { weight: 1, arbitrary: fc.object().map((value) => JSON.stringify(value)) },
  );
}

// ---------------------------------------------------------------------------------------------
// Raw bodies: built once, when first used; named so that counterexamples stay short

const nested = (open: string, inner: string, close: string, depth: number): string =>
  open.repeat(depth) + inner + close.repeat(depth);

/** A JSON document of about `bytes` bytes: one string field. */
const bigString = (bytes: number, key = 'a'): string =>
  `{${JSON.stringify(key)}:"${'x'.repeat(Math.max(0, bytes - key.length - 7))}"}`;

const RAW_BODIES: Readonly<Record<string, () => string | Buffer>> = {
  empty: () => '',
  whitespace: () => ' \r\n\t ',
  bom: () => '\ufeff{}',
  null: () => 'null',
  true: () => 'true',
  zero: () => '0',
  string: () => '"text"',
  'empty-array': () => '[]',
  'empty-object': () => '{}',
  minus: () => '-',
  'open-brace': () => '{',
  'open-bracket': () => '[',
  quote: () => '"',
  'missing-value': () => '{"a":}',
  'lone-comma': () => '{,}',
  'missing-colon': () => '{"a" 1}',
  'trailing-comma': () => '[1,]',
  'single-quotes': () => "{'a':1}",
  nan: () => 'NaN',
  infinity: () => 'Infinity',
  undef: () => 'undefined',
  'huge-exponent': () => '1e999',
  'huge-exponent-field': () => '{"stopTimeoutSeconds":1e999,"limit":-1e999}',
  'long-number': () => '1'.repeat(5000),
  'long-number-field': () => `{"a":${'9'.repeat(5000)}}`,
  hex: () => '0x10',
  'two-documents': () => '{"a":1}{"b":2}',
  'trailing-garbage': () => '{"a":1} x',
  'raw-nul': () => '\u0000',
  'nul-in-string': () => '{"a":"\u0000"}',
  'escaped-nul': () => '{"a":"\\u0000","\\u0000":"b"}',
  'lone-surrogate': () => '"\\ud800"',
  'lone-surrogate-key': () => '{"\\ud800":1,"text":"\\udfff\\ud800"}',
  'proto-pollution': () => '{"__proto__":{"polluted":"yes"}}',
  'proto-pollution-spaced': () => '{ "__proto__" : { "polluted" : "yes" } }',
  'proto-escaped': () => '{"__pro\\u0074o__":{"polluted":"yes"}}',
  'proto-nested': () => '{"a":{"b":{"__proto__":{"polluted":"yes"}}}}',
  'proto-in-array': () => '[{"__proto__":{"polluted":"yes"}}]',
  'proto-null': () => '{"__proto__":null}',
  'constructor-prototype': () => '{"constructor":{"prototype":{"polluted":"yes"}}}',
  'constructor-escaped': () => '{"\\u0063onstructor":{"prototype":{"polluted":"yes"}}}',
  'duplicate-keys': () => '{"role":"user","role":"admin","status":"closed","status":"x"}',
  'deep-array-5000': () => nested('[', '', ']', 5000),
  'deep-object-5000': () => nested('{"a":', '1', '}', 5000),
  'deep-proto-5000': () => nested('{"__proto__":', '{}', '}', 5000),
  'deep-array-100000': () => nested('[', '', ']', 100_000),
  'deep-object-60000': () => nested('{"a":', '1', '}', 60_000),
  'deep-mixed-50000': () => nested('{"a":[', '0', ']}', 50_000),
  'deep-unclosed': () => '['.repeat(200_000),
  'wide-object': () => `{${Array.from({ length: 60_000 }, (_, i) => `"k${i}":${i}`).join(',')}}`,
  'long-array': () => `[${'0,'.repeat(300_000)}0]`,
  'many-strings': () => JSON.stringify(Array.from({ length: 50_000 }, (_, i) => `s${i}`)),
  'servers-10001': () =>
    JSON.stringify({ servers: Array.from({ length: 10_001 }, (_, i) => `srv${i}`) }),
  'servers-10000': () =>
    JSON.stringify({ servers: Array.from({ length: 10_000 }, (_, i) => `srv${i % 50}`) }),
  'string-under-limit': () => bigString(BODY_LIMIT - 64),
  'string-at-limit': () => bigString(BODY_LIMIT),
  'string-over-limit': () => bigString(BODY_LIMIT + 1),
  'string-4mib': () => bigString(4 * BODY_LIMIT),
  'text-under-limit': () => bigString(BODY_LIMIT - 64, 'text'),
  'content-under-limit': () => bigString(BODY_LIMIT - 64, 'content'),
  'content-over-edit-limit': () => bigString(5 * BODY_LIMIT + 64, 'content'),
  'content-over-route-limit': () => bigString(10 * BODY_LIMIT + 128 * 1024, 'content'),
  'description-under-limit': () =>
    `{"title":"t","description":"${'é'.repeat((BODY_LIMIT - 64) / 2 - 20)}"}`,
  'escapes-under-limit': () => `{"text":"${'\\u0041'.repeat((BODY_LIMIT - 64) / 6)}"}`,
  'unicode-under-limit': () => `{"text":"${'😀'.repeat((BODY_LIMIT - 64) / 4)}"}`,
  'invalid-utf8': () =>
    Buffer.concat([
      Buffer.from('{"text":"'),
      Buffer.from([0xff, 0xfe, 0xc0, 0xaf, 0xed, 0xa0, 0x80]),
      Buffer.from('"}'),
    ]),
  'overlong-slash': () =>
    Buffer.concat([Buffer.from('{"path":"'), Buffer.from([0xc0, 0xaf]), Buffer.from('"}')]),
  utf16: () => Buffer.from('{"title":"t","description":"d"}', 'utf16le'),
  utf16bom: () => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('{"a":1}', 'utf16le')]),
  binary: () => randomBytes(4096),
  form: () => 'username=a&password=b&__proto__[polluted]=yes',
  xml: () =>
    '<?xml version="1.0"?><!DOCTYPE a [<!ENTITY x SYSTEM "file:///etc/passwd">]><a>&x;</a>',
};
const RAW_NAMES = Object.keys(RAW_BODIES);
const rawCache = new Map<string, string | Buffer>();
const rawBody = (name: string): string | Buffer => {
  let body = rawCache.get(name);
  if (body === undefined) {
    body = RAW_BODIES[name]!();
    rawCache.set(name, body);
  }
  return body;
};

const CONTENT_TYPES: readonly string[] = [
  'application/json',
  'application/json; charset=utf-8',
  'APPLICATION/JSON',
  'Application/Json; Charset=UTF-8',
  'application/json; charset=utf-16',
  'application/json; charset=latin1',
  'application/json; charset=nonsense',
  'application/json; charset="',
  'application/json;;;',
  'application/json; boundary=x',
  'application/json; a=b; a=c; a=d',
  'application/jsonx',
  'application/json-patch+json',
  'application/vnd.api+json',
  'application/x-www-form-urlencoded',
  'text/plain',
  'text/plain; charset=utf-8',
  'text/json',
  'text/html',
  'text/xml',
  'multipart/form-data',
  'multipart/form-data; boundary=',
  'multipart/form-data; boundary=x',
  'application/octet-stream',
  '*/*',
  '',
  ' ',
  ';',
  '/',
  'a/b/c',
  'json',
  'application/json\t',
  'application/json, text/plain',
  `application/${'x'.repeat(LONG)}`,
  `application/json; charset=${'x'.repeat(LONG)}`,
  'application/json; __proto__=x; constructor=y',
];

const contentType = fc.oneof(
  { weight: 6, arbitrary: fc.constant<string | undefined>('application/json') },
  { weight: 3, arbitrary: fc.constantFrom<string | undefined>(...CONTENT_TYPES, undefined) },
  {
    weight: 1,
    arbitrary: fc
      .string({ unit: 'grapheme-ascii', maxLength: 40 })
      .map((value) => value as string | undefined),
  },
);

// ---------------------------------------------------------------------------------------------
// Query strings and path parameters

/** Percent sequences that are not valid, sent as they are. */
const RAW_SEGMENTS = [
  '%E0%A4%A',
  '%',
  '%%',
  '%zz',
  '%u0041',
  '%c0%af',
  '%ed%a0%80',
  '%ff',
  '%fe%ff',
  '%00',
  '%0a',
  '%0d%0a',
  '%2F',
  '%2e%2e',
  '%2e%2e%2f%2e%2e%2f',
  '..',
  '.',
  '..;',
  ';',
  '%%32%65',
  '%252e',
  '%C0%AE%C0%AE',
  '%F0%9F%98',
  '%F4%90%80%80',
  '~',
  '%41'.repeat(3000),
];

/** A path parameter: text percent-encoded properly, or a raw malformed sequence. */
const pathValue = fc.oneof(
  { weight: 4, arbitrary: text.map(percentEncode) },
  { weight: 1, arbitrary: fc.constantFrom(...RAW_SEGMENTS) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.string({ unit: 'grapheme-ascii', maxLength: 8 }), fc.constantFrom(...RAW_SEGMENTS))
      .map(([prefix, raw]) => percentEncode(prefix) + raw),
  },
);

/** A query string for a route that declares `known` parameters. */
function queryString(known: readonly Parameter[]): fc.Arbitrary<string> {
  const names = known.map((parameter) => parameter.name);
  const key = fc.oneof(
    {
      weight: names.length > 0 ? 5 : 0,
      arbitrary: names.length > 0 ? fc.constantFrom(...names) : text,
    },
    { weight: 1, arbitrary: fc.constantFrom('token', 'path', 'a[b]', 'a[]', '') },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        ...PROTO_KEYS,
        '__proto__[polluted]',
        'constructor[prototype][polluted]',
        '__proto__.polluted',
        'hasOwnProperty',
      ),
    },
    { weight: 1, arbitrary: text },
  );
  const valueFor = (name: string): fc.Arbitrary<string> => {
    const schema = known.find((parameter) => parameter.name === name)?.schema;
    return fc.oneof(
      {
        weight: 2,
        // Never undefined: schema values are JSON values.
        arbitrary: fromSchema(schema).map((value) =>
          typeof value === 'string' ? value : JSON.stringify(value),
        ),
      },
      { weight: 3, arbitrary: text },
    );
  };
  const pair = key.chain((name) =>
    fc.oneof(
      // name=value
      {
        weight: 6,
        arbitrary: valueFor(name).map((value) => `${percentEncode(name)}=${percentEncode(value)}`),
      },
      // a=1&a=2: the same name several times
      {
        weight: 2,
        arbitrary: fc
          .array(valueFor(name), { minLength: 2, maxLength: 4 })
          .map((values) =>
            values.map((value) => `${percentEncode(name)}=${percentEncode(value)}`).join('&'),
          ),
      },
      // a name alone, or raw malformed percent sequences
      { weight: 1, arbitrary: fc.constant(percentEncode(name)) },
      {
        weight: 1,
        arbitrary: fc.constantFrom(...RAW_SEGMENTS).map((raw) => `${percentEncode(name)}=${raw}`),
      },
    ),
  );
  return fc.oneof(
    { weight: 8, arbitrary: fc.array(pair, { maxLength: 5 }).map((pairs) => pairs.join('&')) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '&&&',
        '=',
        '==',
        '&=&',
        '?',
        '??a=1',
        '#',
        'a=1#b',
        '+',
        '%',
        'a'.repeat(LONG),
        // Unencoded, as qs-style parsers read them.
        '__proto__[polluted]=yes',
        'constructor[prototype][polluted]=yes',
        'a[__proto__][polluted]=yes&__proto__.polluted=yes',
        '__proto__=%7B%22polluted%22%3A1%7D',
      ),
    },
    {
      weight: 1,
      arbitrary: fc.constant(Array.from({ length: 2000 }, (_, i) => `k${i}=${i}`).join('&')),
    },
  );
}

// ---------------------------------------------------------------------------------------------
// The panel's routes

interface Route {
  readonly method: string;
  /** Fastify's pattern: `/api/users/:username/role`. */
  readonly url: string;
  readonly params: readonly string[];
  readonly query: readonly Parameter[];
  readonly body: Schema | undefined;
}

/** Routes whose handler would destroy the fixtures or start processes: fuzzed on a ghost target. */
const DESTRUCTIVE = new Set([
  'DELETE /api/servers/:server',
  'DELETE /api/users/:username',
  'POST /api/servers/:server/start',
]);
const CONSOLE_ROUTE = '/ws/servers/:server/console';
/**
 * The two-factor policy: a body that requires it of the fuzzing accounts' roles would leave them
 * able to do nothing but enrol (as it must) for every later test of the file.
 */
const POLICY_ROUTE = 'PUT /api/admin/two-factor';

/** A JSON body for a route (see jsonBody), never one that locks the fuzzing accounts out. */
function routeBody(route: Route): fc.Arbitrary<string> {
  const body = jsonBody(route.body);
  if (`${route.method} ${route.url}` !== POLICY_ROUTE) return body;
  return body.filter((text) => {
    try {
      const { requiredFor } = JSON.parse(text) as { requiredFor?: unknown };
      return !(
        Array.isArray(requiredFor) &&
        requiredFor.some((role) => role === 'admin' || role === 'user')
      );
    } catch {
      return true;
    }
  });
}

function routesOf(panel: TestPanel): Route[] {
  const document = panel.app.swagger() as { paths?: Record<string, Record<string, Operation>> };
  const seen = new Set<string>();
  const routes: Route[] = [];
  for (const { method, url } of panel.app.registeredRoutes) {
    // The docs page's static files are files on disk, not API input.
    if (url.includes('*') || seen.has(`${method} ${url}`)) continue;
    seen.add(`${method} ${url}`);
    const documented = url.replace(/:(\w+)/g, '{$1}');
    const operation =
      document.paths?.[documented]?.[method.toLowerCase()] ??
      document.paths?.[documented]?.[method === 'HEAD' ? 'get' : ''];
    const parameters = operation?.parameters ?? [];
    routes.push({
      method,
      url,
      params: [...url.matchAll(/:(\w+)/g)].map((match) => match[1]!),
      query: parameters.filter((parameter) => parameter.in === 'query'),
      body: operation?.requestBody?.content?.['application/json']?.schema,
    });
  }
  return routes;
}

// ---------------------------------------------------------------------------------------------

describe('fuzzing every route from its schema', () => {
  let panel: TestPanel;
  let admin: Session;
  let user: Session;
  let ticketId: number;
  let routes: Route[];
  let serverDir: string;
  const prototypeBefore = {
    object: Object.getOwnPropertyNames(Object.prototype).sort(),
    array: Object.getOwnPropertyNames(Array.prototype).sort(),
    function: Object.getOwnPropertyNames(Function.prototype).sort(),
  };

  /** What the panel logged (only when collecting), and the failures found. */
  const logLines: string[] = [];
  const collected = new Map<string, { count: number; example: string; log: string }>();

  after(() => {
    if (COLLECT) {
      for (const [signature, { count, example, log }] of collected) {
        console.log(`\n${count}× ${signature}\n  e.g. ${example}\n  log: ${clip(log, 1500)}`);
      }
    }
  });
  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(
      suite,
      {
        ...(COLLECT ? { LOG_LEVEL: 'error' } : {}),
        // A provider that is never up: its sign-in answers 503 PROVIDER_UNAVAILABLE by design, but
        // only after the redirect target was checked, which is what the fuzzing reaches.
        OIDC_PROVIDERS: JSON.stringify([
          {
            id: PROVIDER,
            name: 'Fuzz IdP',
            issuer: 'http://127.0.0.1:9/fuzz',
            clientId: 'fuzz',
            clientSecret: 'fuzz-secret',
          },
        ]),
      },
      COLLECT ? { logStream: { write: (line: string) => logLines.push(line) } } : {},
    );
    admin = await register(panel, ADMIN);
    user = await register(panel, USER);
    await register(panel, VICTIM);
    await register(panel, WITNESS);
    await createServer(panel, admin, SERVER);
    await createServer(panel, admin, SIBLING);
    serverDir = path.join(panel.config.serversDir, SERVER);
    const assigned = await panel.app.inject({
      method: 'PUT',
      url: `/api/users/${USER}/servers`,
      headers: admin.headers,
      payload: { servers: [SERVER] },
    });
    assert.equal(assigned.statusCode, 200, assigned.body);
    for (const [type, name, folder] of [
      ['folder', 'fuzz-folder', ''],
      ['file', 'fuzz-notes.txt', ''],
      ['file', 'inner.txt', 'fuzz-folder'],
    ] as const) {
      const created = await panel.app.inject({
        method: 'POST',
        url: `/api/servers/${SERVER}/files/create`,
        headers: admin.headers,
        payload: { type, name, path: folder },
      });
      assert.equal(created.statusCode, 200, created.body);
    }
    const saved = await panel.app.inject({
      method: 'PUT',
      url: `/api/servers/${SERVER}/files/content?path=fuzz-notes.txt`,
      headers: admin.headers,
      payload: { content: 'hello\n' },
    });
    assert.equal(saved.statusCode, 200, saved.body);
    await writeFile(path.join(panel.config.serversDir, SIBLING, 'secret.txt'), 'sibling\n');
    const ticket = await panel.app.inject({
      method: 'POST',
      url: '/api/tickets/create',
      headers: user.headers,
      payload: { title: 'Fuzz', description: 'A ticket to fuzz' },
    });
    assert.equal(ticket.statusCode, 200, ticket.body);
    ticketId = json<{ data: { id: number } }>(ticket).data.id;
    routes = routesOf(panel);
  });
  // What one test's random requests did to the fixture servers (a stop command they ignore, a
  // long stop timeout, a CPU limit of 1 %, running) never slows the stops of the next test: each
  // starts from servers that stop at once.
  afterEach(async () => {
    for (const name of [SERVER, SIBLING]) {
      await panel.app.inject({
        method: 'POST',
        url: `/api/servers/${name}/kill`,
        headers: admin.headers,
      });
      const reset = await panel.app.inject({
        method: 'PUT',
        url: `/api/servers/${name}/config`,
        headers: admin.headers,
        payload: {
          startCommand: gameServerCommand(),
          stopCommand: null,
          stopTimeoutSeconds: 1,
          autoRestart: false,
          runtime: 'process',
          limits: { memoryBytes: null, cpuPercent: null, pids: null, diskBytes: null },
        },
      });
      // A server a test deleted is gone: nothing to reset.
      assert.ok([200, 404].includes(reset.statusCode), reset.body);
    }
  });

  /** Credentials for a request. */
  function authorization(identity: Identity): Record<string, string> {
    if (identity === 'admin') return admin.headers;
    if (identity === 'user') return user.headers;
    if (identity === 'anonymous') return {};
    return { authorization: identity.authorization };
  }

  /** The value of a path parameter that reaches the handler (a ghost for destructive routes). */
  function realParam(route: Route, name: string): string {
    const ghost = DESTRUCTIVE.has(`${route.method} ${route.url}`);
    switch (name) {
      case 'server':
        return ghost ? 'ghost-server' : SERVER;
      case 'username':
        return ghost ? 'ghost-user' : VICTIM;
      case 'id':
        return String(ticketId);
      case 'provider':
        return PROVIDER;
      default:
        return 'x';
    }
  }

  function urlOf(route: Route, params: Record<string, string> = {}, query = ''): string {
    const pathPart = route.url.replace(
      /:(\w+)/g,
      (_, name: string) => params[name] ?? percentEncode(realParam(route, name)),
    );
    return query === '' ? pathPart : `${pathPart}?${query}`;
  }

  /** Sends a request; fails when it is not answered within REQUEST_TIMEOUT_MS. */
  async function send(req: Req): Promise<LightMyRequestResponse> {
    const options: InjectOptions = {
      method: req.method,
      url: req.url,
      headers: { ...authorization(req.as), ...req.headers },
      remoteAddress: req.remoteAddress,
      ...(req.payload === undefined ? {} : { payload: req.payload }),
    };
    const limit = req.timeoutMs ?? REQUEST_TIMEOUT_MS;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        reject(new Error(`no answer within ${limit} ms: ${describeRequest(req)}`));
      }, limit);
    });
    try {
      return await Promise.race([panel.app.inject(options), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** The property every request must hold: an answer below 500, in time, in the error shape. */
  async function expectHandled(req: Req, allow503 = false): Promise<LightMyRequestResponse> {
    const logged = logLines.length;
    const response = await send(req);
    // A HEAD answer has no body to show the code; the route answers 503 only for its provider.
    const providerDown =
      allow503 &&
      response.statusCode === 503 &&
      (req.method === 'HEAD' || response.body.includes('PROVIDER_UNAVAILABLE'));
    if (COLLECT && response.statusCode >= 500 && !providerDown) {
      const route = routes.find((item) =>
        new RegExp(`^${item.url.replace(/:\w+/g, '[^/]*')}$`).test(req.url.split('?')[0] ?? ''),
      );
      const log = logLines.slice(logged).join('');
      const error = /"message":"([^"]*)"/.exec(log.slice(log.indexOf('"err"')))?.[1] ?? '';
      const signature = `${response.statusCode} ${req.method} ${route?.url ?? req.url.slice(0, 60)} ${error.slice(0, 100)}`;
      const entry = collected.get(signature) ?? { count: 0, example: describeRequest(req), log };
      entry.count++;
      collected.set(signature, entry);
      return response;
    }
    assert.ok(
      response.statusCode < 500 || providerDown,
      `${response.statusCode} ${clip(response.body)} for ${describeRequest(req)}`,
    );
    for (const marker of LEAK_MARKERS) {
      assert.ok(!response.body.includes(marker), `${marker} leaked to ${describeRequest(req)}`);
    }
    return response;
  }

  const isOidcLogin = (url: string): boolean => url.startsWith('/api/auth/oidc/');

  async function check(t: TestContext, property: fc.IAsyncProperty<[Req]>, numRuns: number) {
    const seed = FIXED_SEED ?? (Date.now() ^ randomBytes(4).readUInt32LE()) | 0;
    t.diagnostic(`seed ${seed} (FUZZ_SEED=${seed} replays it)`);
    await fc.assert(property, { numRuns: Math.max(1, Math.round(numRuns * SCALE)), seed });
  }

  const routeOf = (filter: (route: Route) => boolean) => fc.constantFrom(...routes.filter(filter));
  const fuzzable = (route: Route): boolean => route.url !== CONSOLE_ROUTE;

  it('answers random and hostile path parameters below 500, in time', async (t) => {
    const withParams = routeOf((route) => route.params.length > 0);
    const request = fc
      .record({
        route: withParams,
        values: fc.array(pathValue, { minLength: 1, maxLength: 3 }),
        query: fc.option(
          fc.constantFrom('path=fuzz-notes.txt', 'path=', 'old_path=x&new_name=y', 'token=x'),
          { nil: '' },
        ),
        remoteAddress,
      })
      // Random values never hit the fixtures, so a DELETE cannot remove them.
      .filter(
        ({ values }) =>
          !values.some((value) =>
            [SERVER, SIBLING, ADMIN, USER, VICTIM, WITNESS].includes(value.toLowerCase()),
          ),
      )
      .map(({ route, values, query, remoteAddress }) => {
        const params = Object.fromEntries(
          route.params.map((name, i) => [name, values[i % values.length]!]),
        );
        return printable({
          method: route.method,
          url: urlOf(route, params, query),
          as: 'admin',
          headers: {},
          remoteAddress,
        });
      });
    await check(
      t,
      fc.asyncProperty(request, async (req) => {
        await expectHandled(req, isOidcLogin(req.url));
      }),
      300,
    );
  });

  it('answers random URLs and methods below 500, in time', async (t) => {
    const segment = fc.oneof(
      {
        weight: 3,
        arbitrary: fc.constantFrom(
          'api',
          'servers',
          SERVER,
          'files',
          'users',
          'tickets',
          'auth',
          'ws',
          'docs',
          'static',
          'health',
          'oidc',
          String(ticketId),
        ),
      },
      { weight: 2, arbitrary: pathValue },
      // Ways out of the docs page's static folder, and what lies outside it.
      {
        weight: 2,
        arbitrary: fc.constantFrom(
          '..',
          '%2e%2e',
          '%2E%2E',
          '..%2f..%2f..',
          '%2e%2e%2f%2e%2e%2f%2e%2e',
          '..%5c..%5c..',
          '....',
          '%c0%ae%c0%ae',
          '%252e%252e',
          'etc',
          'passwd',
          'package.json',
          'node_modules',
        ),
      },
    );
    const request = fc
      .record({
        method: fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'),
        segments: fc.array(segment, { maxLength: 7 }),
        prefix: fc.constantFrom(
          '/',
          '//',
          '/api/',
          '/./',
          '/../',
          '/%2e%2e/',
          '/API/',
          '/api//',
          '/api/docs/static/',
        ),
        suffix: fc.constantFrom(
          '',
          '/',
          '?',
          '#x',
          ';x',
          '?a=1&a=2',
          '/..',
          '/%2e%2e/health',
          '/.%2e/',
        ),
        remoteAddress,
      })
      .map(({ method, segments, prefix, suffix, remoteAddress }) =>
        printable({
          method,
          url: prefix + segments.join('/') + suffix,
          as: 'admin',
          headers: {},
          remoteAddress,
        }),
      );
    await check(
      t,
      fc.asyncProperty(request, async (req) => {
        await expectHandled(req, isOidcLogin(req.url));
      }),
      150,
    );
  });

  it('answers random and hostile query strings below 500, in time', async (t) => {
    const request = routeOf(fuzzable).chain((route) =>
      fc
        .record({ query: queryString(route.query), remoteAddress })
        .map(({ query, remoteAddress }) =>
          printable({
            method: route.method,
            url: urlOf(route, {}, query),
            as: 'admin',
            headers: {},
            remoteAddress,
          }),
        ),
    );
    await check(
      t,
      fc.asyncProperty(request, async (req) => {
        await expectHandled(req, isOidcLogin(req.url));
      }),
      300,
    );
  });

  it('answers random, hostile and schema-breaking JSON bodies below 500, in time', async (t) => {
    const request = routeOf(fuzzable).chain((route) =>
      fc
        .record({
          body: routeBody(route),
          contentType: fc.oneof(
            { weight: 9, arbitrary: fc.constant('application/json') },
            { weight: 1, arbitrary: fc.constant('application/json; charset=utf-8') },
          ),
          remoteAddress,
        })
        .map(({ body, contentType, remoteAddress }) =>
          printable({
            method: route.method,
            url: urlOf(route),
            as: 'admin',
            headers: { 'content-type': contentType },
            payload: body,
            remoteAddress,
          }),
        ),
    );
    await check(
      t,
      fc.asyncProperty(request, async (req) => {
        await expectHandled(req, isOidcLogin(req.url));
      }),
      400,
    );
  });

  it('answers library eggs changed in random places, on the import route, below 500', async (t) => {
    assert.ok(LIBRARY_EGGS.length > 0, 'the egg library in test/fixtures/eggs');
    const value = fc.oneof(anyJson, fc.constantFrom<unknown>(...EGG_STRINGS));
    const request = fc
      .record({
        egg: fc.constantFrom(...LIBRARY_EGGS),
        changes: fc.array(fc.tuple(fc.nat(), value), { minLength: 1, maxLength: 3 }),
        asYaml: fc.boolean(),
      })
      .map(({ egg, changes, asYaml }) => {
        let changed = egg;
        for (const [n, replacement] of changes) {
          const places = placesIn(changed);
          changed = replacedAt(changed, places[n % places.length] ?? [], replacement);
        }
        return printable({
          method: 'POST',
          url: '/api/templates/import',
          as: 'admin',
          headers: { 'content-type': asYaml ? 'application/yaml' : 'application/json' },
          payload: asYaml ? toYaml(changed) : JSON.stringify(changed),
          remoteAddress: '10.78.0.1',
        });
      });
    await check(
      t,
      fc.asyncProperty(request, async (req) => {
        await expectHandled(req);
      }),
      150,
    );
  });

  it('answers deep, wide, huge and prototype bodies on every route that reads one below 500', async () => {
    // Sent to every route rather than sampled, so that one route's failure is never missed.
    const names = [
      'deep-array-5000',
      'deep-object-5000',
      'deep-proto-5000',
      'deep-array-100000',
      'deep-object-60000',
      'deep-mixed-50000',
      'deep-unclosed',
      'wide-object',
      'long-array',
      'string-under-limit',
      'string-over-limit',
      'string-4mib',
      'proto-pollution',
      'proto-escaped',
      'constructor-prototype',
    ];
    const failures = new Map<string, string[]>();
    for (const route of routes.filter(
      (item) => fuzzable(item) && !['GET', 'HEAD'].includes(item.method),
    )) {
      for (const name of names) {
        const req: Req = {
          method: route.method,
          url: urlOf(route),
          as: 'admin',
          headers: { 'content-type': 'application/json' },
          payload: rawBody(name),
          remoteAddress: '10.79.0.1',
        };
        let outcome: string;
        try {
          const response = await send(req);
          if (response.statusCode < 500) continue;
          outcome = String(response.statusCode);
        } catch (error) {
          outcome = String(error).slice(0, 80);
        }
        const key = `${name} (${clip(String(req.payload), 40)}): ${outcome} on`;
        failures.set(key, [...(failures.get(key) ?? []), `${route.method} ${route.url}`]);
      }
    }
    assert.deepEqual(
      [...failures].map(([key, where]) => `${key} ${where.join(', ')}`),
      [],
    );
  });

  it('answers hostile raw bodies, huge and deep ones, and wrong content types below 500', async (t) => {
    const request = routeOf(fuzzable).chain((route) =>
      fc
        .record({
          body: fc.oneof(
            { weight: 4, arbitrary: fc.constantFrom(...RAW_NAMES).map((name) => ({ name })) },
            { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }).map((bytes) => ({ bytes })) },
            { weight: 1, arbitrary: routeBody(route).map((json) => ({ json })) },
          ),
          contentType,
          lengthMismatch: fc.oneof(
            { weight: 9, arbitrary: fc.constant(undefined) },
            { weight: 1, arbitrary: fc.constantFrom(0, 1, 10, 1_000_000, -1) },
          ),
          remoteAddress,
        })
        .map(({ body, contentType, lengthMismatch, remoteAddress }) => {
          const payload =
            'name' in body
              ? rawBody(body.name)
              : 'bytes' in body
                ? Buffer.from(body.bytes)
                : body.json;
          const headers: Record<string, string> = {};
          if (contentType !== undefined) headers['content-type'] = contentType;
          if (lengthMismatch !== undefined) headers['content-length'] = String(lengthMismatch);
          return printable({
            method: route.method,
            url: urlOf(route),
            as: 'admin',
            headers,
            payload,
            remoteAddress,
          });
        }),
    );
    await check(
      t,
      fc.asyncProperty(request, async (req) => {
        await expectHandled(req, isOidcLogin(req.url));
      }),
      300,
    );
  });

  it('answers anonymous callers, users and hostile credentials below 500', async (t) => {
    const secret = new TextEncoder().encode(TEST_JWT_SECRET);
    const sign = (claims: Record<string, unknown>, subject: string) =>
      new SignJWT(claims)
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(subject)
        .setIssuer('game-panel')
        .setAudience('game-panel:api')
        .setIssuedAt()
        .setExpirationTime('1h')
        .sign(secret);
    const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const forged: Identity[] = [];
    // Tokens with the panel's own signature but odd claims: what a bug in issuing could produce.
    for (const [subject, ver] of [
      ['2147483648', 0],
      ['9007199254740991', 0],
      ['1e3', 0],
      ['01', 0],
      [' 1', 0],
      ['0x1', 0],
      ['1', 2 ** 53 - 1],
      ['1', -1],
      ['1', 2147483648],
    ] as const) {
      forged.push({
        authorization: `Bearer ${await sign({ ver }, subject)}`,
        label: `signed token sub=${subject} ver=${ver}`,
      });
    }
    const credentials = fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom<Identity>('anonymous', 'user', 'admin') },
      { weight: 1, arbitrary: fc.constantFrom(...forged) },
      {
        weight: 2,
        arbitrary: fc
          .oneof(
            fc.constantFrom(
              'Bearer',
              'Bearer ',
              'Bearer  ',
              'bearer x',
              'Basic YWRtaW46YWRtaW4=',
              'Bearer a.b.c',
              'Bearer ....',
              `Bearer ${b64({ alg: 'none' })}.${b64({ sub: '1', ver: 0 })}.`,
              `Bearer ${b64({ alg: 'HS256' })}.${b64({ sub: { $ne: 1 } })}.x`,
              `Bearer ${b64({ alg: 'RS256', kid: '../../etc/passwd' })}.${b64({})}.x`,
              `Bearer ${'a'.repeat(LONG)}`,
              `Bearer ${'a.'.repeat(LONG / 2)}`,
              `${admin.headers.authorization} extra`,
              `${admin.headers.authorization},${user.headers.authorization}`,
              `Bearer ${admin.token.slice(0, -2)}`,
            ),
            fc
              .string({ unit: 'grapheme-ascii', maxLength: 60 })
              .map((value) => `Bearer ${value.replace(/[^\x20-\x7e]/g, '')}`),
          )
          .map((authorization): Identity => ({
            authorization,
            label: `authorization ${JSON.stringify(clip(authorization, 80))}`,
          })),
      },
    );
    const request = routeOf(fuzzable).chain((route) =>
      fc
        .record({
          as: credentials,
          query: fc.option(queryString(route.query), { nil: '' }),
          body: fc.option(routeBody(route), { nil: undefined }),
          remoteAddress,
        })
        .map(({ as, query, body, remoteAddress }) =>
          printable({
            method: route.method,
            url: urlOf(route, {}, query),
            as,
            headers: body === undefined ? {} : { 'content-type': 'application/json' },
            ...(body === undefined ? {} : { payload: body }),
            remoteAddress,
          }),
        ),
    );
    await check(
      t,
      fc.asyncProperty(request, async (req) => {
        await expectHandled(req, isOidcLogin(req.url));
      }),
      250,
    );
  });

  it('answers hostile Range headers on downloads below 500', async (t) => {
    const number = fc.oneof(
      fc.nat({ max: 20 }),
      fc.constantFrom(
        '',
        '-1',
        '1e999',
        '99999999999999999999999',
        '0x10',
        'NaN',
        ' 1',
        '1.5',
        '٣',
      ),
    );
    const range = fc.oneof(
      {
        weight: 4,
        arbitrary: fc
          .array(fc.tuple(number, number), { minLength: 1, maxLength: 4 })
          .map((pairs) => `bytes=${pairs.map(([a, b]) => `${a}-${b}`).join(',')}`),
      },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          'bytes=',
          'bytes=-',
          'bytes=--1',
          'bytes=0-0,-1',
          'items=0-1',
          'bytes 0-1',
          '=0-1',
          `bytes=${'0-1,'.repeat(5000)}0-1`,
          'bytes=\u0000-1',
        ),
      },
      { weight: 1, arbitrary: fc.string({ unit: 'grapheme-ascii', maxLength: 40 }) },
    );
    const request = fc
      .record({
        range,
        file: fc.constantFrom('fuzz-notes.txt', 'fuzz-folder/inner.txt', 'fuzz-folder', 'missing'),
        method: fc.constantFrom('GET', 'HEAD'),
        remoteAddress,
      })
      .map(({ range, file, method, remoteAddress }) =>
        printable({
          method,
          url: `/api/servers/${SERVER}/files/download?path=${percentEncode(file)}`,
          as: 'admin',
          headers: { range: range.replace(/[^\x20-\x7e]/g, '') },
          remoteAddress,
        }),
      );
    await check(
      t,
      fc.asyncProperty(request, async (req) => {
        await expectHandled(req);
      }),
      150,
    );
  });

  it('answers hostile sign-in callbacks (query and cookie) below 500', async (t) => {
    const value = fc.oneof(text, fc.constantFrom('a.b.c', 'x'.repeat(5000), '%', ''));
    const request = fc
      .record({
        query: queryString(
          ['state', 'code', 'iss', 'error', 'error_description', 'session_state'].map((name) => ({
            name,
            in: 'query',
            schema: { type: 'string' },
          })),
        ),
        cookie: fc.option(
          fc.oneof(
            value.map((item) => `panel_oidc=${percentEncode(item)}`),
            fc.constantFrom(
              'panel_oidc=',
              'panel_oidc',
              'panel_oidc=a; panel_oidc=b',
              '=; ;;',
              `panel_oidc=${'A'.repeat(8000)}`,
              'panel_oidc=%E0%A4%A',
              '__proto__=x; constructor=y',
            ),
          ),
          { nil: undefined },
        ),
        provider: fc.oneof(fc.constant(PROVIDER), pathValue),
        action: fc.constantFrom('callback', 'login'),
        remoteAddress,
      })
      .map(({ query, cookie, provider, action, remoteAddress }) =>
        printable({
          method: 'GET',
          url: `/api/auth/oidc/${provider}/${action}?${query}`,
          as: 'anonymous',
          headers: cookie === undefined ? {} : { cookie: cookie.replace(/[^\x20-\x7e]/g, '') },
          remoteAddress,
        }),
      );
    await check(
      t,
      fc.asyncProperty(request, async (req) => {
        await expectHandled(req, true);
      }),
      150,
    );
  });

  it('answers plain GETs of the console socket route (no upgrade) below 500', async (t) => {
    const request = fc
      .record({
        server: fc.oneof(fc.constant(SERVER), fc.constant('ghost-server'), pathValue),
        query: fc.oneof(
          fc.constant(''),
          queryString([{ name: 'token', in: 'query', schema: { type: 'string' } }]),
          fc.constant(`token=${admin.token}`),
          fc.constant(`token=${admin.token}&token=${user.token}`),
          fc.constant(`token=${user.token}&__proto__=x`),
        ),
        as: fc.constantFrom<Identity>('admin', 'user', 'anonymous'),
        headers: fc.constantFrom<Record<string, string>>(
          {},
          { connection: 'keep-alive' },
          { upgrade: 'websocket' },
          { connection: 'upgrade', upgrade: 'h2c' },
          { 'sec-websocket-version': '13', 'sec-websocket-key': 'garbage' },
        ),
        method: fc.constantFrom('GET', 'HEAD', 'POST'),
        remoteAddress,
      })
      .map(({ server, query, as, headers, method, remoteAddress }) =>
        printable({
          method,
          url: `/ws/servers/${server}/console${query === '' ? '' : `?${query}`}`,
          as,
          headers,
          remoteAddress,
        }),
      );
    await check(
      t,
      fc.asyncProperty(request, async (req) => {
        await expectHandled(req);
      }),
      120,
    );
  });

  // -------------------------------------------------------------------------------------------
  // Multipart

  describe('hostile multipart uploads', () => {
    let outsideBefore: Map<string, string>;

    /** Everything in the data directory but the server's own folder and the database files. */
    async function outside(): Promise<Map<string, string>> {
      const found = new Map<string, string>();
      const entries = await readdir(panel.dataDir, { recursive: true });
      for (const entry of entries.map(String).sort()) {
        if (
          entry === path.join('servers', SERVER) ||
          entry.startsWith(path.join('servers', SERVER) + path.sep)
        )
          continue;
        if (entry.startsWith('panel.sqlite')) continue;
        const info = await lstat(path.join(panel.dataDir, entry)).catch(() => undefined);
        // Folders by presence (their times change with any entry inside), files by size and time.
        let shape = 'gone';
        if (info) shape = info.isDirectory() ? 'folder' : `file:${info.size}:${info.mtimeMs}`;
        found.set(entry, shape);
      }
      return found;
    }

    async function temporaryFiles(): Promise<string[]> {
      const entries = await readdir(serverDir, { recursive: true });
      return entries.map(String).filter((entry) => path.basename(entry).startsWith('.panel-tmp-'));
    }

    before(async () => {
      // The fuzzing above may have deleted or renamed it; uploads aim at it.
      await mkdir(path.join(serverDir, 'fuzz-folder'), { recursive: true });
      outsideBefore = await outside();
    });

    const BOUNDARY = '----fuzz-boundary';
    const part = (
      headers: string,
      content: string | Buffer = 'data',
      boundary = BOUNDARY,
    ): Buffer =>
      Buffer.concat([
        Buffer.from(`--${boundary}\r\n${headers}\r\n\r\n`),
        Buffer.from(content),
        Buffer.from('\r\n'),
      ]);
    const filePart = (filename: string, content: string | Buffer = 'data', name = 'file'): Buffer =>
      part(
        `Content-Disposition: form-data; name="${name}"; filename="${filename}"\r\nContent-Type: application/octet-stream`,
        content,
      );
    const close = (boundary = BOUNDARY) => Buffer.from(`--${boundary}--\r\n`);
    const multipartType = (boundary = BOUNDARY) => `multipart/form-data; boundary=${boundary}`;

    const upload = (
      payload: Buffer | string,
      type: string | null = multipartType(),
      query = '',
      as: Identity = 'admin',
    ): Req =>
      printable({
        method: 'POST',
        url: `/api/servers/${SERVER}/files/upload${query === '' ? '' : `?${query}`}`,
        as,
        headers: type === null ? {} : { 'content-type': type },
        payload,
        remoteAddress: '10.78.0.1',
      });

    const well = Buffer.concat([filePart('ok.txt'), close()]);
    const CASES: readonly (readonly [string, () => Req])[] = [
      ['multipart without a boundary', () => upload(well, 'multipart/form-data')],
      ['an empty boundary', () => upload(well, 'multipart/form-data; boundary=')],
      ['a quoted empty boundary', () => upload(well, 'multipart/form-data; boundary=""')],
      ['a garbage boundary', () => upload(well, 'multipart/form-data; boundary=;;;')],
      [
        'a boundary of 200 characters',
        () =>
          upload(
            Buffer.concat([
              part(
                'Content-Disposition: form-data; name="file"; filename="b.txt"',
                'x',
                'b'.repeat(200),
              ),
              close('b'.repeat(200)),
            ]),
            multipartType('b'.repeat(200)),
          ),
      ],
      ['a boundary of 100 KB', () => upload(well, multipartType('b'.repeat(100_000)))],
      [
        'a boundary with spaces and quotes',
        () => upload(well, 'multipart/form-data; boundary="a b \\" c"'),
      ],
      [
        'two boundaries',
        () => upload(well, `multipart/form-data; boundary=x; boundary=${BOUNDARY}`),
      ],
      ['a boundary that differs from the body', () => upload(well, multipartType('other'))],
      ['multipart/mixed', () => upload(well, `multipart/mixed; boundary=${BOUNDARY}`)],
      ['MULTIPART/FORM-DATA', () => upload(well, `MULTIPART/FORM-DATA; BOUNDARY=${BOUNDARY}`)],
      ['no content type', () => upload(well, null)],
      ['an empty body', () => upload('')],
      ['only the closing boundary', () => upload(close())],
      ['only a preamble', () => upload('just some text, no boundary at all')],
      [
        'an empty field name',
        () => upload(Buffer.concat([filePart('empty-name.txt', 'x', ''), close()])),
      ],
      [
        'a part without a name',
        () =>
          upload(
            Buffer.concat([part('Content-Disposition: form-data; filename="noname.txt"'), close()]),
          ),
      ],
      [
        'a part without Content-Disposition',
        () => upload(Buffer.concat([part('Content-Type: text/plain'), close()])),
      ],
      [
        'a part without any header',
        () => upload(Buffer.concat([Buffer.from(`--${BOUNDARY}\r\n\r\nbody\r\n`), close()])),
      ],
      [
        'a part with an attachment disposition',
        () =>
          upload(
            Buffer.concat([
              part('Content-Disposition: attachment; name="file"; filename="att.txt"'),
              close(),
            ]),
          ),
      ],
      [
        'a field, not a file',
        () =>
          upload(
            Buffer.concat([
              part('Content-Disposition: form-data; name="file"', 'not a file'),
              close(),
            ]),
          ),
      ],
      [
        'a field of 100 KB',
        () =>
          upload(
            Buffer.concat([
              part('Content-Disposition: form-data; name="note"', 'x'.repeat(100_000)),
              filePart('after-field.txt'),
              close(),
            ]),
          ),
      ],
      [
        'a field name of 10 KB',
        () => upload(Buffer.concat([filePart('long-field.txt', 'x', 'f'.repeat(10_000)), close()])),
      ],
      [
        '30 fields',
        () =>
          upload(
            Buffer.concat([
              ...Array.from({ length: 30 }, (_, i) =>
                part(`Content-Disposition: form-data; name="f${i}"`, 'v'),
              ),
              filePart('after-fields.txt'),
              close(),
            ]),
          ),
      ],
      [
        // The first 1000 are stored, each written and flushed to disk: seconds of work.
        '5000 tiny file parts',
        () => ({
          ...upload(
            Buffer.concat([
              ...Array.from({ length: 5000 }, (_, i) => filePart(`tiny-${i % 3}.txt`, String(i))),
              close(),
            ]),
          ),
          timeoutMs: 30_000,
        }),
      ],
      [
        '5000 tiny fields',
        () =>
          upload(
            Buffer.concat([
              ...Array.from({ length: 5000 }, () =>
                part('Content-Disposition: form-data; name="f"', 'v'),
              ),
              close(),
            ]),
          ),
      ],
      [
        '5000 empty parts',
        () =>
          upload(
            Buffer.concat([
              ...Array.from({ length: 5000 }, () => Buffer.from(`--${BOUNDARY}\r\n\r\n\r\n`)),
              close(),
            ]),
          ),
      ],
      [
        'a filename with NUL',
        () => upload(Buffer.concat([filePart('nul\u0000name.txt'), close()])),
      ],
      [
        'a filename with CR and LF',
        () => upload(Buffer.concat([filePart('cr\rlf\nname.txt'), close()])),
      ],
      [
        'a filename of ../',
        () => upload(Buffer.concat([filePart(`../../../../${ESCAPE_NAME}`), close()])),
      ],
      ['a filename of ..', () => upload(Buffer.concat([filePart('..'), close()]))],
      ['a filename of .', () => upload(Buffer.concat([filePart('.'), close()]))],
      ['an empty filename', () => upload(Buffer.concat([filePart(''), close()]))],
      ['a filename of /', () => upload(Buffer.concat([filePart('/'), close()]))],
      [
        'a Windows path',
        () => upload(Buffer.concat([filePart(`C:\\..\\..\\${ESCAPE_NAME}`), close()])),
      ],
      [
        'a reserved temporary name',
        () => upload(Buffer.concat([filePart('.panel-tmp-deadbeef'), close()])),
      ],
      [
        'a filename of 300 bytes',
        () => upload(Buffer.concat([filePart('n'.repeat(300)), close()])),
      ],
      [
        'a filename* with bad encoding',
        () =>
          upload(
            Buffer.concat([
              part(
                `Content-Disposition: form-data; name="file"; filename*=UTF-8''%E0%A4%A%00%2e%2e%2f${ESCAPE_NAME}`,
              ),
              close(),
            ]),
          ),
      ],
      [
        'a filename* with an unknown charset',
        () =>
          upload(
            Buffer.concat([
              part(
                `Content-Disposition: form-data; name="file"; filename*=x-evil''..%2f..%2f${ESCAPE_NAME}`,
              ),
              close(),
            ]),
          ),
      ],
      [
        'a filename with invalid UTF-8',
        () =>
          upload(
            Buffer.concat([
              Buffer.from(
                `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="`,
              ),
              Buffer.from([0xff, 0xc0, 0xaf, 0x2e, 0x2e]),
              Buffer.from('"\r\n\r\nx\r\n'),
              close(),
            ]),
          ),
      ],
      [
        'a part header line of 100 KB',
        () =>
          upload(
            Buffer.concat([
              part(
                `Content-Disposition: form-data; name="file"; filename="big-header.txt"\r\nX-Long: ${'h'.repeat(100_000)}`,
              ),
              close(),
            ]),
          ),
      ],
      [
        'a Content-Disposition of 100 KB',
        () =>
          upload(
            Buffer.concat([
              part(
                `Content-Disposition: form-data; name="file"; filename="${'d'.repeat(100_000)}"`,
              ),
              close(),
            ]),
          ),
      ],
      [
        '1000 part headers',
        () =>
          upload(
            Buffer.concat([
              part(
                `Content-Disposition: form-data; name="file"; filename="many-headers.txt"\r\n${Array.from({ length: 1000 }, (_, i) => `X-H${i}: v`).join('\r\n')}`,
              ),
              close(),
            ]),
          ),
      ],
      ['no closing boundary', () => upload(filePart('truncated.txt', 'x'.repeat(10_000)))],
      [
        'truncated inside the content',
        () =>
          upload(
            Buffer.from(
              `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="cut.txt"\r\n\r\nhalf of the fi`,
            ),
          ),
      ],
      [
        'truncated inside the part headers',
        () => upload(Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="fi`)),
      ],
      [
        'truncated after a complete file',
        () =>
          upload(
            Buffer.concat([
              filePart('complete.txt'),
              filePart('incomplete.txt', 'x'.repeat(100_000)).subarray(0, 50_000),
            ]),
          ),
      ],
      [
        'LF line endings',
        () =>
          upload(
            `--${BOUNDARY}\nContent-Disposition: form-data; name="file"; filename="lf.txt"\n\nx\n--${BOUNDARY}--\n`,
          ),
      ],
      [
        'a nested multipart/mixed part',
        () =>
          upload(
            Buffer.concat([
              part(
                'Content-Disposition: form-data; name="file"; filename="nested.txt"\r\nContent-Type: multipart/mixed; boundary=inner',
                '--inner\r\nContent-Disposition: file; filename="../x"\r\n\r\nx\r\n--inner--',
              ),
              close(),
            ]),
          ),
      ],
      [
        'the boundary inside the content',
        () =>
          upload(Buffer.concat([filePart('inside.txt', `--${BOUNDARY}-- not really`), close()])),
      ],
      [
        'a prototype field name',
        () =>
          upload(
            Buffer.concat([
              filePart('proto.txt', 'x', '__proto__'),
              part('Content-Disposition: form-data; name="constructor"', 'x'),
              close(),
            ]),
          ),
      ],
      [
        'a hostile upload path',
        () => upload(well, multipartType(), `path=${percentEncode(`../${SIBLING}`)}`),
      ],
      ['a NUL in the upload path', () => upload(well, multipartType(), 'path=%00')],
      [
        'an upload path of 20 KB',
        () => upload(well, multipartType(), `path=${'a/'.repeat(10_000)}`),
      ],
      [
        'a server that does not exist',
        () => ({ ...upload(well), url: '/api/servers/ghost/files/upload' }),
      ],
      ['an anonymous upload', () => upload(well, multipartType(), '', 'anonymous')],
      [
        'a user upload',
        () =>
          upload(Buffer.concat([filePart('by-user.txt'), close()]), multipartType(), '', 'user'),
      ],
      ['a JSON body', () => upload('{"file":"x"}', 'application/json')],
      [
        'a body over the body limit without a file',
        () =>
          upload(
            Buffer.concat([
              part('Content-Disposition: form-data; name="note"', 'x'.repeat(2 * BODY_LIMIT)),
              close(),
            ]),
          ),
      ],
    ];

    it('answers every hand-built hostile multipart body below 500, in time', async () => {
      // Every case is sent, and every failing one listed.
      const failures: string[] = [];
      for (const [name, build] of CASES) {
        const req = build();
        try {
          const response = await send(req);
          if (response.statusCode >= 500) {
            failures.push(`${name}: ${response.statusCode} for ${describeRequest(req)}`);
          }
        } catch (error) {
          failures.push(`${name}: ${String(error)}`);
        }
      }
      assert.deepEqual(failures, []);
    });

    it('answers random multipart bodies below 500, in time', async (t) => {
      const headerText = fc.oneof(
        { weight: 3, arbitrary: text },
        { weight: 1, arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 30 }) },
      );
      const disposition = fc.oneof(
        {
          weight: 4,
          arbitrary: fc
            .record({
              name: fc.oneof(
                { weight: 4, arbitrary: fc.constant('file') },
                { weight: 1, arbitrary: fc.constant('') },
                { weight: 2, arbitrary: headerText },
              ),
              filename: fc.option(
                fc.oneof(
                  {
                    weight: 2,
                    arbitrary: fc.constantFrom(
                      'a.txt',
                      `../../${ESCAPE_NAME}`,
                      `..\\..\\${ESCAPE_NAME}`,
                      '.panel-tmp-x',
                      '',
                      '..',
                    ),
                  },
                  { weight: 3, arbitrary: headerText },
                ),
                { nil: undefined },
              ),
              star: fc.boolean(),
            })
            .map(({ name, filename, star }) => {
              let line = `Content-Disposition: form-data; name="${name}"`;
              if (filename !== undefined) {
                line += star
                  ? `; filename*=UTF-8''${percentEncode(filename)}`
                  : `; filename="${filename}"`;
              }
              return line;
            }),
        },
        { weight: 1, arbitrary: headerText.map((value) => `Content-Disposition: ${value}`) },
        { weight: 1, arbitrary: fc.constant('') },
      );
      const partArbitrary = fc.record({
        disposition,
        extra: fc.array(
          fc.tuple(
            fc.constantFrom('Content-Type', 'Content-Transfer-Encoding', 'X-A', '', ':'),
            headerText,
          ),
          { maxLength: 2 },
        ),
        content: fc.oneof(
          fc.uint8Array({ maxLength: 64 }).map((bytes) => Buffer.from(bytes)),
          text.map((value) => Buffer.from(value)),
        ),
      });
      const request = fc
        .record({
          boundary: fc.oneof(
            { weight: 3, arbitrary: fc.constant(BOUNDARY) },
            {
              weight: 1,
              arbitrary: fc.constantFrom(
                'x',
                '-',
                '--',
                ' ',
                'a'.repeat(70),
                'a'.repeat(71),
                'é',
                '"q"',
              ),
            },
            {
              weight: 1,
              arbitrary: fc
                .string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 20 })
                .map((value) => value.replace(/[\r\n]/g, '')),
            },
          ),
          declared: fc.oneof(
            { weight: 4, arbitrary: fc.constant<string | undefined>(undefined) },
            { weight: 1, arbitrary: fc.constantFrom<string | undefined>('', 'other', BOUNDARY) },
          ),
          typeTemplate: fc.oneof(
            { weight: 5, arbitrary: fc.constant('multipart/form-data; boundary={b}') },
            {
              weight: 1,
              arbitrary: fc.constantFrom(
                'multipart/form-data; boundary="{b}"',
                'multipart/form-data',
                'multipart/form-data; charset=utf-8; boundary={b}',
                'multipart/mixed; boundary={b}',
                'application/json',
                'multipart/form-data; boundary={b}; boundary=z',
              ),
            },
          ),
          parts: fc.array(partArbitrary, { maxLength: 6 }),
          eol: fc.oneof(
            { weight: 4, arbitrary: fc.constant('\r\n') },
            { weight: 1, arbitrary: fc.constantFrom('\n', '\r') },
          ),
          closing: fc.constantFrom('close', 'close', 'close', 'none', 'no-dashes'),
          preamble: fc.option(text, { nil: '' }),
          cut: fc.option(fc.nat(), { nil: undefined }),
          query: fc.oneof(
            { weight: 4, arbitrary: fc.constant('') },
            {
              weight: 1,
              arbitrary: fc.constantFrom(
                'path=fuzz-folder',
                'path=..',
                'path=fuzz-notes.txt',
                'path=nope',
                `path=${percentEncode(`../${SIBLING}`)}`,
              ),
            },
          ),
        })
        .map(({ boundary, declared, typeTemplate, parts, eol, closing, preamble, cut, query }) => {
          const chunks: Buffer[] = [Buffer.from(preamble === '' ? '' : `${preamble}${eol}`)];
          for (const item of parts) {
            const headers = [
              item.disposition,
              ...item.extra.map(([name, value]) => `${name}: ${value}`),
            ].filter((line) => line !== '');
            chunks.push(
              Buffer.from(`--${boundary}${eol}${headers.join(eol)}${eol}${eol}`),
              item.content,
              Buffer.from(eol),
            );
          }
          if (closing === 'close') chunks.push(Buffer.from(`--${boundary}--${eol}`));
          if (closing === 'no-dashes') chunks.push(Buffer.from(`--${boundary}${eol}`));
          let payload = Buffer.concat(chunks);
          if (cut !== undefined && payload.length > 0)
            payload = payload.subarray(0, cut % payload.length);
          return upload(payload, typeTemplate.replace('{b}', declared ?? boundary), query);
        });
      await check(
        t,
        fc.asyncProperty(request, async (req) => {
          await expectHandled(req);
        }),
        200,
      );
    });

    it('left nothing outside the server directory and no temporary file inside it', async () => {
      // An aborted upload removes its temporary file; give a late removal a moment.
      await eventually(
        async () => ((await temporaryFiles()).length === 0 ? true : undefined),
        'the temporary files to be removed',
        3_000,
      ).catch(() => undefined);
      assert.deepEqual(await temporaryFiles(), [], 'temporary files left in the server directory');
      const now = await outside();
      for (const [entry, before] of outsideBefore) {
        assert.equal(now.get(entry), before, `${entry} outside the server directory changed`);
      }
      for (const entry of now.keys()) {
        assert.ok(outsideBefore.has(entry), `${entry} appeared outside the server directory`);
      }
      for (const dir of [
        panel.dataDir,
        panel.config.serversDir,
        path.dirname(panel.dataDir),
        tmpdir(),
      ]) {
        assert.ok(!existsSync(path.join(dir, ESCAPE_NAME)), `${ESCAPE_NAME} was written in ${dir}`);
      }
    });
  });

  it('is still healthy afterwards: health, login, the database, and no polluted prototype', async () => {
    const health = await panel.app.inject({ url: '/api/health' });
    assert.equal(health.statusCode, 200, health.body);
    const signedIn = await login(panel, WITNESS, PASSWORD);
    assert.equal(signedIn.statusCode, 200, signedIn.body);
    const token = json<{ access_token: string }>(signedIn).access_token;
    const me = await panel.app.inject({
      url: '/api/auth/me',
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(me.statusCode, 200, me.body);
    assert.equal(json(me).username, WITNESS);
    const adminMe = await panel.app.inject({ url: '/api/auth/me', headers: admin.headers });
    assert.equal(adminMe.statusCode, 200, adminMe.body);
    assert.equal(json(adminMe).role, 'admin');
    const ticket = await panel.app.inject({
      method: 'POST',
      url: '/api/tickets/create',
      headers: user.headers,
      payload: { title: 'Still here', description: 'after the fuzzing' },
    });
    assert.equal(ticket.statusCode, 200, ticket.body);
    const listing = await panel.app.inject({
      url: `/api/servers/${SERVER}/files`,
      headers: admin.headers,
    });
    assert.equal(listing.statusCode, 200, listing.body);
    const registered = await register(panel, `after-${TAG}`);
    assert.equal(registered.role, 'user');

    const probe: Record<string, unknown> = {};
    for (const key of POLLUTION_MARKERS) {
      assert.equal(probe[key], undefined, `Object.prototype.${key} was polluted`);
      assert.equal(
        ([] as unknown as Record<string, unknown>)[key],
        undefined,
        `Array.prototype.${key} was polluted`,
      );
    }
    assert.deepEqual(Object.getOwnPropertyNames(Object.prototype).sort(), prototypeBefore.object);
    assert.deepEqual(Object.getOwnPropertyNames(Array.prototype).sort(), prototypeBefore.array);
    assert.deepEqual(
      Object.getOwnPropertyNames(Function.prototype).sort(),
      prototypeBefore.function,
    );
  });
});
