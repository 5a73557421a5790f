/**
 * The public egg library (test/fixtures/eggs: pelican-eggs/eggs, pelican-eggs/minecraft,
 * pelican-eggs/games-standalone and Pterodactyl's own eggs, as a Pterodactyl or Pelican operator
 * brings them) imports, every file of it: through parseEgg (no database), and a sample through the
 * real route `POST /api/templates/import`, which never answers 5xx. The eggs this importer used to
 * refuse are checked one by one for what it now reads in them.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { AppError } from '../src/errors.js';
import { parseEgg, type ImportedEgg } from '../src/templates/egg.js';
import { renderText, startScript, templateEnvironment } from '../src/templates/render.js';
import { startPanel, suiteScope, type TestPanel } from './helpers/app.js';
import { json, register, type Session } from './helpers/factories.js';

const LIBRARY = path.join(import.meta.dirname, 'fixtures', 'eggs');

/** Every egg file of the library (JSON and YAML), relative to it, sorted. */
function eggFiles(): string[] {
  let entries: string[];
  try {
    entries = readdirSync(LIBRARY, { recursive: true, encoding: 'utf8' });
  } catch {
    return [];
  }
  return entries
    .filter((file) => /\.(json|ya?ml)$/i.test(file))
    .map((file) => file.split(path.sep).join('/'))
    .sort();
}

const FILES = eggFiles();
const REPOSITORIES = new Set(FILES.map((file) => file.split('/')[0]));
const read = (file: string): string => readFileSync(path.join(LIBRARY, file), 'utf8');

/** What went wrong, for the failure message. */
function importOrProblem(file: string): ImportedEgg | string {
  try {
    return parseEgg(read(file));
  } catch (error) {
    return `${file}: ${error instanceof AppError ? error.message : String(error)}`;
  }
}

/**
 * The eggs the importer refused before it read what Wings and the panels accept, and the warning
 * that now says how each was read.
 */
const FORMERLY_REFUSED: readonly [string, RegExp][] = [
  [
    'pelican-eggs+eggs/game_eggs/classicube/mcgalaxy/egg-classi-cube--m-g-c.json',
    /\["\/properties\/server\.properties"\]: the path is read inside the server folder, as Wings does: "properties\/server\.properties"/,
  ],
  [
    'pelican-eggs+games-standalone/classicube/mcgalaxy/egg-pterodactyl-classi-cube--m-g-c.json',
    /the path is read inside the server folder/,
  ],
  [
    'pelican-eggs+eggs/game_eggs/steamcmd_servers/ddnet/egg-d-d-net.json',
    /"ddnet\/data\/autoexec_server\.cfg"/,
  ],
  [
    'pelican-eggs+eggs/game_eggs/steamcmd_servers/the_forest/egg-the-forest.json',
    /the path is read inside the server folder/,
  ],
  [
    'pelican-eggs+eggs/game_eggs/steamcmd_servers/the_isle/evrima/egg-the-isle.json',
    /the path is read inside the server folder/,
  ],
  [
    'pelican-eggs+eggs/game_eggs/steamcmd_servers/truck-simulator/american-truck-simulator/egg-american-truck-simulator-dedicated-server.json',
    /".local\/share\/American Truck Simulator\/server_config\.sii"/,
  ],
  [
    'pelican-eggs+eggs/game_eggs/steamcmd_servers/truck-simulator/euro-truck-simulator2/egg-euro-truck-simulator2-dedicated-server.json',
    /the path is read inside the server folder/,
  ],
  [
    'pelican-eggs+eggs/game_eggs/minecraft/bedrock/gomint/egg-go-mint.json',
    /\["server\.yml"\]\.parser: "yml" is read as "yaml"/,
  ],
  ['pelican-eggs+minecraft/bedrock/gomint/egg-pterodactyl-go-mint.json', /"yml" is read as "yaml"/],
  ['pelican-eggs+eggs/voice_servers/lavalink/egg-lavalink.json', /"yml" is read as "yaml"/],
  [
    'pelican-eggs+eggs/game_eggs/steamcmd_servers/mordhau/egg-mordhau-wine.json',
    /variables\[3\] \(WINDOWS_INSTALL\): variables\[11\] has the same name; the last one is kept/,
  ],
  [
    'pelican-eggs+games-standalone/OneHourOneLife/pelican-egg-one-hour-one-life.json',
    /\["OneLife\/server\/settings\/port\.ini"\]\.find\[""\]: an empty key replaces every line/,
  ],
  [
    'pelican-eggs+games-standalone/OneHourOneLife/pterodactyl-egg-one-hour-one-life.json',
    /an empty key replaces every line/,
  ],
  [
    'pelican-eggs+eggs/game_eggs/minecraft/java/feather/egg-feather.json',
    /images: PTDL_v2 names its images in docker_images; the images list is used/,
  ],
];

describe('the public egg library', () => {
  it(`imports all ${FILES.length} egg files of ${REPOSITORIES.size} repositories`, () => {
    assert.ok(FILES.length > 0, `no egg files in ${LIBRARY}`);
    const problems = FILES.map(importOrProblem).filter((result) => typeof result === 'string');
    assert.deepEqual(problems, []);
  });

  it(`reads the ${FORMERLY_REFUSED.length} eggs it used to refuse, saying how`, () => {
    for (const [file, warning] of FORMERLY_REFUSED) {
      const result = importOrProblem(file);
      assert.ok(typeof result !== 'string', result as string);
      assert.ok(
        result.warnings.some((text) => warning.test(text)),
        `${file}: ${warning} in\n${result.warnings.join('\n')}`,
      );
    }
  });

  it('keeps every config file inside the server folder, and every reference to a renamed variable', () => {
    for (const file of FILES) {
      const result = importOrProblem(file);
      if (typeof result === 'string') continue; // the first test says why
      const { definition, warnings } = result;
      for (const rule of definition.configFiles) {
        assert.doesNotMatch(rule.file, /^[/\\]|(^|[/\\])\.\.([/\\]|$)/, `${file}: ${rule.file}`);
      }
      // A reserved name renamed leaves no placeholder naming the old one, in any case.
      for (const warning of warnings) {
        const renamed = /^variables\[\d+\] \((\w+)\): the name is reserved/.exec(warning)?.[1];
        if (renamed === undefined) continue;
        const old = new RegExp(`\\{\\{(?:[\\w.]*\\.)?${renamed}\\}\\}`, 'i');
        const texts = [
          ...definition.startupCommands.map((command) => command.command),
          ...definition.configFiles.flatMap((rule) => rule.replace.map((r) => r.value)),
        ];
        for (const text of texts) assert.doesNotMatch(text, old, `${file}: ${text}`);
      }
    }
  });

  it('Post Scriptum: its lower-case hostname reaches Server.cfg under its new name', () => {
    const { definition } = parseEgg(
      read('pelican-eggs+eggs/game_eggs/steamcmd_servers/post_scriptum/egg-post-scriptum.json'),
    );
    const variable = definition.variables.find((v) => v.envVariable === 'SERVER_HOSTNAME');
    assert.equal(variable?.defaultValue, 'Pterodactyl Server');
    const serverName = definition.configFiles
      .flatMap((rule) => rule.replace)
      .find((replacement) => replacement.match === 'ServerName');
    assert.equal(serverName?.value, 'ServerName={{server.build.env.SERVER_HOSTNAME}}');
    const env = templateEnvironment(definition, 'start', {
      variables: {},
      allocations: [{ ip: '0.0.0.0', port: 10027 }],
      memoryBytes: 2 ** 30,
    });
    assert.equal(renderText(serverName.value, env), 'ServerName=Pterodactyl Server');
  });
});

describe('the start-ups of the public egg library', () => {
  // Start commands are run by bash, as Wings' yolks run them (test/shells.test.ts runs some);
  // here every one of the library is read by bash, rendered as the panel renders it.
  const commands = FILES.flatMap((file) => {
    const egg = importOrProblem(file);
    if (typeof egg === 'string') return [];
    return egg.definition.startupCommands.map((startup) => ({
      file,
      script: startScript(startup.command),
    }));
  });

  it(`has all ${commands.length} start commands read by bash without a syntax error`, () => {
    const refused = commands.flatMap(({ file, script }) => {
      const check = spawnSync('bash', ['-n', '-c', script], { encoding: 'utf8' });
      return check.status === 0 ? [] : [`${file}: ${check.stderr.trim()}`];
    });
    assert.ok(commands.length >= FILES.length, 'every egg has a start command');
    assert.deepEqual(refused, []);
  });
});

describe('the public egg library through POST /api/templates/import', () => {
  // The eggs refused before, then every eighth file; one egg per uuid (the repositories share
  // some), so each import is a new template.
  const seen = new Set<string>();
  const sample = [...FORMERLY_REFUSED.map(([file]) => file), ...FILES.filter((_, i) => i % 8 === 0)]
    .filter((file, i, all) => all.indexOf(file) === i)
    .filter((file) => {
      const result = importOrProblem(file);
      const uuid = typeof result === 'string' ? file : (result.uuid ?? file);
      if (seen.has(uuid)) return false;
      seen.add(uuid);
      return true;
    });

  let panel: TestPanel;
  let admin: Session;
  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite);
    admin = await register(panel, 'admin');
  });

  it(`imports a sample of ${sample.length} of them, each answering 200 with the parser's warnings`, async () => {
    assert.ok(sample.length > FORMERLY_REFUSED.length / 2, 'a sample to import');
    for (const file of sample) {
      const text = read(file);
      const response = await panel.app.inject({
        method: 'POST',
        url: '/api/templates/import',
        headers: {
          ...admin.headers,
          'content-type': file.endsWith('.json') ? 'application/json' : 'application/yaml',
        },
        payload: text,
      });
      assert.ok(response.statusCode < 500, `${file}: ${response.statusCode} ${response.body}`);
      assert.equal(response.statusCode, 200, `${file}: ${response.body}`);
      const template = json<{ data: { warnings: string[]; name: string } }>(response).data;
      const parsed = parseEgg(text);
      assert.equal(template.name, parsed.definition.name, file);
      assert.deepEqual(template.warnings, parsed.warnings, file);
    }
  });
});
