/**
 * A template's config-file rules, applied to real files in a server's folder through a real
 * ServerStorage: every parser (create, replace, conditional and regex replacements, wildcards,
 * nested keys, comments kept), then hostile rules and hostile files. Beside the servers' folder
 * lies a folder of bait files, and `s2`, a sibling server; after every hostile rule everything
 * outside `s1` must be byte-for-byte what it was, and the rule must be reported as failed.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { ConfigFileRule, ConfigParser, ConfigReplacement } from '../src/domain/template.js';
import {
  applyConfigFiles,
  serverConfigFiles,
  type ConfigFileAccess,
  type ConfigFileResult,
} from '../src/host/local/config-files.js';
import { ServerStorage } from '../src/host/local/storage/server-storage.js';

const BAIT = 'BAIT: must never be read or changed\nserver-port=1\n';
const SIBLING = 'server-port=2\n';

/** What `render` resolves, as the templates' renderer would. */
const PLACEHOLDERS: Record<string, string> = {
  '{{server.build.default.port}}': '25577',
  '{{server.build.default.ip}}': '0.0.0.0',
  '{{config.docker.interface}}': '172.18.0.1',
};
const render = (value: string): string =>
  value.replace(/\{\{[^}]+\}\}/g, (placeholder) => PLACEHOLDERS[placeholder] ?? placeholder);

const set = (match: string, value: string): ConfigReplacement => ({ match, ifValue: null, value });
const when = (match: string, ifValue: string, value: string): ConfigReplacement => ({
  match,
  ifValue,
  value,
});
const rule = (
  file: string,
  parser: ConfigParser,
  ...replace: ConfigReplacement[]
): ConfigFileRule => ({ file, parser, replace });

let base: string;
let server: string;
let outside: string;
let storage: ServerStorage;
let files: ConfigFileAccess;

/** Every file under `dir` with its content (symlinks as their target). */
async function snapshot(dir: string): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    const full = path.join(entry.parentPath, entry.name);
    if (entry.isFile()) found.set(full, await readFile(full, 'utf8'));
    else if (entry.isSymbolicLink()) found.set(full, `-> symlink`);
    else if (entry.isDirectory()) found.set(full, '(folder)');
  }
  return found;
}

/** Everything outside s1: the bait folder and the sibling server. */
const outsideS1 = async (): Promise<Map<string, string>> =>
  new Map([...(await snapshot(outside)), ...(await snapshot(path.join(base, 'servers', 's2')))]);

async function apply(...rules: ConfigFileRule[]): Promise<ConfigFileResult[]> {
  const report = await applyConfigFiles(rules, files, render);
  return [...report.files];
}

async function applyOne(
  file: string,
  parser: ConfigParser,
  ...replace: ConfigReplacement[]
): Promise<ConfigFileResult> {
  const [result] = await apply(rule(file, parser, ...replace));
  assert.ok(result);
  return result;
}

const put = (name: string, content: string | Buffer): Promise<void> =>
  writeFile(path.join(server, name), content);
const get = (name: string): Promise<string> => readFile(path.join(server, name), 'utf8');
const exists = (name: string): Promise<boolean> =>
  stat(path.join(server, name)).then(
    () => true,
    () => false,
  );

before(async () => {
  base = await mkdtemp(path.join(tmpdir(), 'config-files-'));
  outside = path.join(base, 'outside');
  storage = new ServerStorage(path.join(base, 'servers'));
  files = serverConfigFiles(storage, 's1');
});
after(() => rm(base, { recursive: true, force: true }));

beforeEach(async () => {
  await rm(path.join(base, 'servers'), { recursive: true, force: true });
  await rm(outside, { recursive: true, force: true });
  await storage.create('s1');
  await storage.create('s2');
  server = path.join(base, 'servers', 's1');
  await mkdir(outside);
  await writeFile(path.join(outside, 'bait.properties'), BAIT);
  await writeFile(path.join(base, 'servers', 's2', 'server.properties'), SIBLING);
});

describe('properties', () => {
  it('replaces a value in place, keeping comments, order, separators and other lines', async () => {
    await put(
      'server.properties',
      '#Minecraft server properties\n#Mon Jan 01\nmotd=A Minecraft Server\n' +
        '! another comment\nserver-port = 25565\nmax-players:20\n',
    );
    const result = await applyOne(
      'server.properties',
      'properties',
      set('server-port', '{{server.build.default.port}}'),
      set('motd', '§aWelcome'),
    );
    assert.equal(result.outcome, 'changed');
    assert.equal(
      await get('server.properties'),
      '#Minecraft server properties\n#Mon Jan 01\nmotd=\\u00a7aWelcome\n' +
        '! another comment\nserver-port = 25577\nmax-players:20\n',
    );
  });

  it('an ifValue regex runs in RE2, in linear time; one RE2 cannot run fails the file', async () => {
    const near = `${'a'.repeat(5000)}b`;
    await put('re.properties', `motd=${near}\nname=aaaa\nport=localhost:25565\n`);
    const result = await applyOne(
      're.properties',
      'properties',
      when('motd', 'regex:^(a+)+$', 'calm'),
      when('name', 'regex:^(a+)+$', 'calm'),
      when('port', 'regex:^(?P<host>localhost)(:\\d{1,5})?$', '0.0.0.0$2 ${host}'),
    );
    assert.equal(result.outcome, 'changed');
    assert.equal(
      await get('re.properties'),
      `motd=${near}\nname=calm\nport=0.0.0.0:25565 localhost\n`,
    );
    const refused = await applyOne(
      're.properties',
      'properties',
      when('name', 'regex:(a)\\1', 'x'),
    );
    assert.equal(refused.outcome, 'failed');
    assert.match(refused.error ?? '', /backreferences are not supported/);
  });

  it('appends a missing key, and creates a missing file with it', async () => {
    await put('a.properties', 'level-name=world');
    const appended = await applyOne('a.properties', 'properties', set('server-ip', '0.0.0.0'));
    assert.equal(appended.outcome, 'changed');
    assert.equal(await get('a.properties'), 'level-name=world\nserver-ip=0.0.0.0');

    const created = await applyOne(
      'server.properties',
      'properties',
      set('server-port', '{{server.build.default.port}}'),
      set('query.port', '{{server.build.default.port}}'),
    );
    assert.equal(created.outcome, 'created');
    assert.equal(await get('server.properties'), 'server-port=25577\nquery.port=25577\n');
  });

  it('replaces conditionally only where the current value equals ifValue, never adding', async () => {
    await put('c.properties', 'enable-query=false\nonline-mode=true\n');
    const result = await applyOne(
      'c.properties',
      'properties',
      when('enable-query', 'false', 'true'),
      when('online-mode', 'false', 'true-but-changed'),
      when('missing', 'x', 'y'),
    );
    assert.equal(result.outcome, 'changed');
    assert.equal(await get('c.properties'), 'enable-query=true\nonline-mode=true\n');
  });

  it('reads escapes and continuation lines, and leaves a file already right untouched', async () => {
    await put('d.properties', 'motd=Hello \\\n    World\nport=1\n');
    const result = await applyOne('d.properties', 'properties', when('motd', 'Hello World', 'Hi'));
    assert.equal(result.outcome, 'changed');
    assert.equal(await get('d.properties'), 'motd=Hi\nport=1\n');

    const before = await stat(path.join(server, 'd.properties'));
    const again = await applyOne('d.properties', 'properties', set('port', '1'));
    assert.equal(again.outcome, 'unchanged');
    assert.equal((await stat(path.join(server, 'd.properties'))).mtimeMs, before.mtimeMs);
  });

  it('keeps CRLF line endings', async () => {
    await put('e.properties', '# c\r\na=1\r\nb=2\r\n');
    await applyOne('e.properties', 'properties', set('b', '3'), set('c', '4'));
    assert.equal(await get('e.properties'), '# c\r\na=1\r\nb=3\r\nc=4\r\n');
  });
});

describe('ini', () => {
  it('replaces section.key in place, keeping comments, quotes and inline comments', async () => {
    await put(
      'game.ini',
      '; top comment\nname = top\n\n[Server]\n# port below\nPort=7777 ; game port\n' +
        'Name = "My Server"\n\n[Other]\nPort = 1\n',
    );
    const result = await applyOne(
      'game.ini',
      'ini',
      set('Server.Port', '{{server.build.default.port}}'),
      set('Server.Name', 'Renamed'),
      set('name', 'top2'),
    );
    assert.equal(result.outcome, 'changed');
    assert.equal(
      await get('game.ini'),
      '; top comment\nname = top2\n\n[Server]\n# port below\nPort=25577 ; game port\n' +
        'Name = "Renamed"\n\n[Other]\nPort = 1\n',
    );
  });

  it('adds a missing key to its section and a missing section at the end', async () => {
    await put('g.ini', '[Server]\nPort=1\n\n[Other]\nx=1\n');
    await applyOne(
      'g.ini',
      'ini',
      set('Server.MaxPlayers', '10'),
      set('[/Script/Engine.GameSession].MaxPlayers', '20'),
      when('Server.Missing', 'a', 'b'),
    );
    assert.equal(
      await get('g.ini'),
      '[Server]\nPort=1\nMaxPlayers = 10\n\n[Other]\nx=1\n\n' +
        '[/Script/Engine.GameSession]\nMaxPlayers = 20\n',
    );
  });

  it('replaces conditionally and with a regex', async () => {
    await put('h.ini', '[Net]\nHost=127.0.0.1:7777\nMode=old\n');
    await applyOne(
      'h.ini',
      'ini',
      when('Net.Host', 'regex:^(127\\.0\\.0\\.1|localhost)(:\\d{1,5})?$', '0.0.0.0$2'),
      when('Net.Mode', 'other', 'new'),
    );
    assert.equal(await get('h.ini'), '[Net]\nHost=0.0.0.0:7777\nMode=old\n');
  });

  it('refuses a value with a line break, leaving the file as it was', async () => {
    await put('i.ini', '[A]\nb=1\n');
    const result = await applyOne('i.ini', 'ini', set('A.b', '2\n[Injected]\nevil=1'));
    assert.equal(result.outcome, 'failed');
    assert.match(result.error ?? '', /line break/);
    assert.equal(await get('i.ini'), '[A]\nb=1\n');
  });
});

describe('file', () => {
  it('replaces every line starting with the match, whole, and adds nothing', async () => {
    await put('start.cfg', '// config\nport 25565\nport_query 1\nname x\n');
    const result = await applyOne(
      'start.cfg',
      'file',
      set('port ', 'port {{server.build.default.port}}'),
      set('missing', 'never added'),
    );
    assert.equal(result.outcome, 'changed');
    assert.equal(await get('start.cfg'), '// config\nport 25577\nport_query 1\nname x\n');
  });

  it('replaces a line conditionally on the whole line', async () => {
    await put('f.cfg', 'mode=a\nmode=b\n');
    await applyOne('f.cfg', 'file', when('mode=', 'mode=b', 'mode=c'));
    assert.equal(await get('f.cfg'), 'mode=a\nmode=c\n');
  });

  it('an empty match replaces every line, as Wings does (one-line files of OneHourOneLife)', async () => {
    await put('port.ini', '8005\n');
    await put('two.ini', 'a\r\nb\r\n');
    await put('empty.ini', '');
    const results = await apply(
      rule('port.ini', 'file', set('', '{{server.build.default.port}}')),
      rule('two.ini', 'file', set('', 'x')),
      rule('empty.ini', 'file', set('', 'x')),
      rule('missing.ini', 'file', set('', 'x')),
    );
    assert.deepEqual(
      results.map((result) => result.outcome),
      ['changed', 'changed', 'unchanged', 'skipped'],
    );
    assert.equal(await get('port.ini'), '25577\n');
    assert.equal(await get('two.ini'), 'x\r\nx\r\n');
    assert.equal(await get('empty.ini'), '');
    assert.equal(await exists('missing.ini'), false);
  });

  it('creates no file when there is nothing to replace in', async () => {
    const result = await applyOne('none.cfg', 'file', set('port', 'port 1'));
    assert.equal(result.outcome, 'skipped');
    assert.equal(await exists('none.cfg'), false);
  });
});

describe('json', () => {
  it('sets nested keys, lists by index and wildcards, keeping indent, types and numbers', async () => {
    await put(
      'config.json',
      JSON.stringify(
        {
          server: { port: 1, name: 'x', ratio: 1 },
          listeners: [{ host: '0.0.0.0:1', query_port: 1 }],
          servers: { lobby: { address: 'localhost:25566' }, pvp: { address: 'example.org:1' } },
          id: 0,
        },
        null,
        4,
      )
        .replace('"ratio": 1', '"ratio": 1.0')
        .replace('"id": 0', '"id": 123456789012345678901') + '\n',
    );
    const result = await applyOne(
      'config.json',
      'json',
      set('server.port', '{{server.build.default.port}}'),
      set('server.name', '25'),
      set('server.online', 'true'),
      set('listeners[0].query_port', '{{server.build.default.port}}'),
      set('listeners.0.host', '0.0.0.0:{{server.build.default.port}}'),
      when(
        'servers.*.address',
        'regex:^(127\\.0\\.0\\.1|localhost)(:\\d{1,5})?$',
        '{{config.docker.interface}}$2',
      ),
      set('new.deeply.nested', 'value'),
    );
    assert.equal(result.outcome, 'changed');
    const text = await get('config.json');
    assert.match(text, /^\{\n {4}"server": \{\n {8}"port": 25577,/);
    assert.match(text, /"ratio": 1\.0,/);
    assert.match(text, /"id": 123456789012345678901,/);
    assert.ok(text.endsWith('}\n'));
    assert.deepEqual(JSON.parse(text.replace('123456789012345678901', '0')), {
      server: { port: 25577, name: '25', ratio: 1, online: true },
      listeners: [{ host: '0.0.0.0:25577', query_port: 25577 }],
      servers: { lobby: { address: '172.18.0.1:25566' }, pvp: { address: 'example.org:1' } },
      id: 0,
      new: { deeply: { nested: 'value' } },
    });
  });

  it('replaces conditionally only an existing, equal value', async () => {
    await put('c.json', '{"a": 1, "b": "x"}');
    await applyOne('c.json', 'json', when('a', '1', '2'), when('b', 'y', 'z'), when('c', '', 'w'));
    assert.deepEqual(JSON.parse(await get('c.json')), { a: 2, b: 'x' });
  });

  it('creates a missing file, and a list for [0]', async () => {
    const result = await applyOne('sub/dir/new.json', 'json', set('list[0].port', '7'));
    assert.equal(result.outcome, 'created');
    assert.equal(
      await get('sub/dir/new.json'),
      '{\n  "list": [\n    {\n      "port": 7\n    }\n  ]\n}\n',
    );
  });

  it('writes __proto__ and constructor as ordinary keys, polluting nothing', async () => {
    await put('p.json', '{"__proto__": {"x": 1}}');
    const result = await applyOne(
      'p.json',
      'json',
      set('__proto__.polluted', 'yes'),
      set('constructor.prototype.polluted', 'yes'),
    );
    assert.equal(result.outcome, 'changed');
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.equal(Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted'), false);
    const written = JSON.parse(await get('p.json')) as Record<string, unknown>;
    assert.deepEqual(Object.getOwnPropertyDescriptor(written, '__proto__')?.value, {
      x: 1,
      polluted: 'yes',
    });
    assert.deepEqual(written.constructor, { prototype: { polluted: 'yes' } });
  });

  it('reports malformed, too deep and wrongly shaped files, leaving them as they were', async () => {
    const broken = '{"a": 1,, }';
    const deep = '['.repeat(200_000) + ']'.repeat(200_000);
    await put('broken.json', broken);
    await put('deep.json', deep);
    await put('list.json', '{"a": 5}');
    const results = await apply(
      rule('broken.json', 'json', set('a', '2')),
      rule('deep.json', 'json', set('0', '2')),
      rule('list.json', 'json', set('a.b', '2')),
    );
    assert.deepEqual(
      results.map((result) => result.outcome),
      ['failed', 'failed', 'failed'],
    );
    assert.match(results[0]?.error ?? '', /not valid JSON/);
    assert.match(results[1]?.error ?? '', /nested more than/);
    assert.match(results[2]?.error ?? '', /a is not an object or a list/);
    assert.equal(await get('broken.json'), broken);
    assert.equal(await get('deep.json'), deep);
    assert.equal(await get('list.json'), '{"a": 5}');
  });
});

describe('yaml', () => {
  const BUNGEE = `# BungeeCord configuration
listeners:
- query_port: 25577 # the query port
  host: 0.0.0.0:25577
  motd: '&1Another Bungee server'
servers:
  lobby:
    # the lobby
    address: localhost:25565
    restricted: false
  pvp:
    address: 10.0.0.5:25565
ip_forward: false
`;

  it('sets nested keys, wildcards and regex replacements, keeping comments', async () => {
    await put('config.yml', BUNGEE);
    const result = await applyOne(
      'config.yml',
      'yaml',
      set('listeners[0].query_port', '{{server.build.default.port}}'),
      set('listeners[0].host', '0.0.0.0:{{server.build.default.port}}'),
      when(
        'servers.*.address',
        'regex:^(127\\.0\\.0\\.1|localhost)(:\\d{1,5})?$',
        '{{config.docker.interface}}$2',
      ),
      set('ip_forward', 'true'),
      set('settings.proxy.enabled', 'true'),
    );
    assert.equal(result.outcome, 'changed');
    assert.equal(
      await get('config.yml'),
      `# BungeeCord configuration
listeners:
- query_port: 25577 # the query port
  host: 0.0.0.0:25577
  motd: '&1Another Bungee server'
servers:
  lobby:
    # the lobby
    address: 172.18.0.1:25565
    restricted: false
  pvp:
    address: 10.0.0.5:25565
ip_forward: true
settings:
  proxy:
    enabled: true
`,
    );
  });

  it('keeps a string a string, and replaces conditionally', async () => {
    await put('s.yml', 'port: "25565"\nname: x # keep me\nlevel: 1\n');
    await applyOne(
      's.yml',
      'yaml',
      set('port', '25577'),
      when('name', 'x', 'y'),
      when('level', '2', '3'),
      when('missing', '', 'z'),
    );
    assert.equal(await get('s.yml'), 'port: "25577"\nname: y # keep me\nlevel: 1\n');
  });

  it('creates a missing file', async () => {
    const result = await applyOne('plugins/x/config.yml', 'yaml', set('a.b', '1'));
    assert.equal(result.outcome, 'created');
    assert.equal(await get('plugins/x/config.yml'), 'a:\n  b: 1\n');
  });

  it('never expands aliases: a billion-laughs file is edited at once, aliases kept', async () => {
    const levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (let i = 1; i < 10; i += 1) {
      const previous = String.fromCharCode(96 + i);
      const name = String.fromCharCode(97 + i);
      levels.push(`${name}: &${name} [${Array(9).fill(`*${previous}`).join(', ')}]`);
    }
    const bomb = `${levels.join('\n')}\nport: 1\n`;
    await put('bomb.yml', bomb);
    const started = Date.now();
    const result = await applyOne('bomb.yml', 'yaml', set('port', '2'), set('j.*', 'x'));
    assert.ok(Date.now() - started < 2_000);
    assert.equal(result.outcome, 'changed');
    const text = await get('bomb.yml');
    assert.ok(text.length < bomb.length * 2);
    assert.match(text, /^port: 2$/m);
    assert.match(text, /^i: &i \[\*h(, \*h){8}\]$/m);
    assert.match(text, /^j: &j \[x(, x){8}\]$/m);
  });

  it('reports malformed, duplicate-key, multi-document and too deep files, unchanged', async () => {
    const contents = {
      'bad.yml': 'a: [1, 2\nb: {',
      'dup.yml': 'a: 1\na: 2\n',
      'multi.yml': 'a: 1\n---\nb: 2\n',
      'deep.yml': '['.repeat(100_000) + ']'.repeat(100_000),
      'scalar.yml': 'just text\n',
      'large.yml': 'k:\n' + '- [a, b]\n'.repeat(40_000),
    };
    for (const [name, content] of Object.entries(contents)) await put(name, content);
    const results = await apply(
      ...Object.keys(contents).map((name) => rule(name, 'yaml', set('a', '2'))),
    );
    for (const result of results) assert.equal(result.outcome, 'failed', result.file);
    for (const [name, content] of Object.entries(contents)) assert.equal(await get(name), content);
  });
});

describe('xml', () => {
  it('sets element text and attributes, makes missing elements, keeps comments', async () => {
    await put(
      'SpaceEngineers-Dedicated.cfg',
      '<?xml version="1.0"?>\n<!-- settings -->\n<MyConfigDedicated>\n' +
        '  <ServerPort>27016</ServerPort>\n  <SessionSettings>\n    <MaxPlayers>4</MaxPlayers>\n' +
        '  </SessionSettings>\n</MyConfigDedicated>\n',
    );
    const result = await applyOne(
      'SpaceEngineers-Dedicated.cfg',
      'xml',
      set('MyConfigDedicated.ServerPort', '{{server.build.default.port}}'),
      set('MyConfigDedicated.SessionSettings.MaxPlayers', '16'),
      set('MyConfigDedicated.IP', '{{server.build.default.ip}}'),
      set('MyConfigDedicated.Network', "[port='7']"),
      when('MyConfigDedicated.*.MaxPlayers', '99', 'never'),
    );
    assert.equal(result.outcome, 'changed');
    assert.equal(
      await get('SpaceEngineers-Dedicated.cfg'),
      '<?xml version="1.0"?>\n<!-- settings -->\n<MyConfigDedicated>\n' +
        '  <ServerPort>25577</ServerPort>\n  <SessionSettings>\n    <MaxPlayers>16</MaxPlayers>\n' +
        '  </SessionSettings>\n  <IP>0.0.0.0</IP>\n  <Network port="7"/>\n</MyConfigDedicated>\n',
    );
  });

  it('creates a missing file with its root element', async () => {
    const result = await applyOne('new.xml', 'xml', set('Config.Port', '5'));
    assert.equal(result.outcome, 'created');
    const text = await get('new.xml');
    assert.equal(text, '<?xml version="1.0" encoding="utf-8"?>\n<Config><Port>5</Port></Config>\n');
  });

  it('reports malformed files, entities, deep nesting and a wrong root, unchanged', async () => {
    const contents = {
      'bad.xml': '<a><b></a>',
      'entity.xml': '<!DOCTYPE a [<!ENTITY e "x"><!ENTITY f "&e;&e;&e;">]><a>&f;</a>',
      'external.xml': `<!DOCTYPE a [<!ENTITY x SYSTEM "file://${outside}/bait.properties">]><a>&x;</a>`,
      'deep.xml': '<a>'.repeat(100_000) + '</a>'.repeat(100_000),
      'root.xml': '<other><b>1</b></other>',
      'large.xml': `<a>${'<b>x</b>'.repeat(40_000)}</a>`,
    };
    for (const [name, content] of Object.entries(contents)) await put(name, content);
    const started = Date.now();
    const results = await apply(
      ...Object.keys(contents).map((name) => rule(name, 'xml', set('a.b', '2'))),
    );
    assert.ok(Date.now() - started < 2_000);
    for (const result of results) assert.equal(result.outcome, 'failed', result.file);
    for (const [name, content] of Object.entries(contents)) assert.equal(await get(name), content);
  });
});

describe('hostile rules and files', () => {
  /** Applies one rule that must fail, and checks that nothing outside s1 changed or appeared. */
  async function refused(file: string, parser: ConfigParser = 'properties'): Promise<string> {
    const before = await outsideS1();
    const result = await applyOne(file, parser, set('server-port', '666'));
    assert.equal(result.outcome, 'failed', `${file} was ${result.outcome}`);
    assert.ok(result.error, 'a failure says why');
    assert.deepEqual(await outsideS1(), before);
    assert.equal(await readFile(path.join(outside, 'bait.properties'), 'utf8'), BAIT);
    return result.error ?? '';
  }

  it('refuses paths that leave the folder', async () => {
    for (const parser of ['properties', 'json', 'yaml', 'ini', 'xml', 'file'] as const) {
      await refused('../../outside/bait.properties', parser);
      await refused('../s2/server.properties', parser);
      await refused('a/../../outside/bait.properties', parser);
      await refused('..\\..\\outside\\bait.properties', parser);
    }
  });

  it('refuses absolute paths, creating nothing inside either', async () => {
    const error = await refused(path.join(outside, 'bait.properties'));
    assert.match(error, /not relative/);
    await refused('/etc/passwd');
    await refused('C:\\Windows\\win.ini', 'ini');
    assert.deepEqual(await readdir(server), []);
  });

  it('refuses symlinks that lead outside, to files and folders, existing or not', async () => {
    await symlink('../../outside/bait.properties', path.join(server, 'link.properties'));
    await symlink(path.join(outside, 'bait.properties'), path.join(server, 'abs.properties'));
    await symlink('../../outside', path.join(server, 'out'));
    await symlink('../../outside/new.properties', path.join(server, 'dangling.properties'));
    await refused('link.properties');
    await refused('abs.properties');
    await refused('out/bait.properties');
    await refused('out/new.properties');
    await refused('out/deeper/new.properties');
    await refused('dangling.properties');
    assert.deepEqual(await readdir(outside), ['bait.properties']);
  });

  it('follows a symlink that stays inside', async () => {
    await mkdir(path.join(server, 'real'));
    await put('real/server.properties', 'server-port=1\n');
    await symlink('real', path.join(server, 'inside'));
    const result = await applyOne('inside/server.properties', 'properties', set('a', 'b'));
    assert.equal(result.outcome, 'changed');
    assert.equal(await get('real/server.properties'), 'server-port=1\na=b\n');
  });

  it('refuses folders, binary, oversized, special and reserved files', async () => {
    await mkdir(path.join(server, 'folder.properties'));
    await put('binary.properties', Buffer.from([0x61, 0x3d, 0x00, 0xff]));
    await put('huge.properties', Buffer.alloc(4 * 1024 * 1024 + 1, 0x61));
    execFileSync('mkfifo', [path.join(server, 'fifo.properties')]);
    await put('file', 'x');
    assert.match(await refused('folder.properties'), /folder/);
    assert.match(await refused('binary.properties'), /UTF-8/);
    assert.match(await refused('huge.properties'), /larger than/);
    await refused('fifo.properties');
    await refused('.panel-tmp-x.properties');
    await refused('file/below.properties');
    await refused('');
    await refused('bad\u0000name.properties');
    assert.equal((await stat(path.join(server, 'huge.properties'))).size, 4 * 1024 * 1024 + 1);
  });

  it('goes on with the other files after one fails', async () => {
    await put('bad.json', '{');
    await put('good.properties', 'server-port=1\n');
    const results = await apply(
      rule('../../outside/bait.properties', 'properties', set('server-port', '666')),
      rule('bad.json', 'json', set('a', '1')),
      rule('good.properties', 'properties', set('server-port', '{{server.build.default.port}}')),
    );
    assert.deepEqual(
      results.map((result) => result.outcome),
      ['failed', 'failed', 'changed'],
    );
    assert.equal(await get('good.properties'), 'server-port=25577\n');
    assert.equal(await get('bad.json'), '{');
  });

  it('reports invalid rules: empty matches, bad paths and regular expressions', async () => {
    await put('r.json', '{"a": "b"}');
    const results = await apply(
      rule('r.json', 'json', set('', 'x')),
      rule('r.json', 'json', set('a..b', 'x')),
      rule('r.json', 'json', when('a', 'regex:(', 'x')),
      rule('r.xml', 'xml', set('a.b c', 'x')),
    );
    for (const result of results) assert.equal(result.outcome, 'failed');
    assert.equal(await get('r.json'), '{"a": "b"}');
    assert.equal(await exists('r.xml'), false);
  });
});
