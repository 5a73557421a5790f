/**
 * Start-ups and install scripts run by the shells the eggs are written for (docs/templates.md,
 * "Shells"): a start command by bash in both runtimes (sh only when a Docker image has no bash,
 * said in the console), an install script by its entrypoint (`ash` through busybox where there
 * is no ash). A variable's value is still text, never shell code, under bash.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { startPanel, suiteScope, type TestPanel } from './helpers/app.js';
import { bashImageForTests, dockerForTests } from './helpers/docker.js';
import {
  eventually,
  historyOf,
  json,
  register,
  serverAction,
  type Session,
} from './helpers/factories.js';

const docker = await dockerForTests();

/** Values that would run `id` if a shell parsed them as code. */
const HOSTILE = {
  V1: '$(id)',
  V2: '`id`',
  V3: ';id',
  V4: 'first\nsecond',
  V5: "it's",
};

/** Lines only bash prints: `[[ ]]` with `==`, process substitution, `$BASH_VERSION`. */
const BASH_ONLY =
  'if [[ "{{MOTD}}" == sun* ]]; then echo "double brackets: yes"; fi; ' +
  'while read -r line; do echo "substituted: $line"; done < <(echo process); ' +
  'echo "bash ${BASH_VERSION:+present}"';

function egg(
  name: string,
  startup: string,
  options: { image?: string; install?: { script: string; entrypoint: string } } = {},
): Record<string, unknown> {
  const variable = (env: string, value: string) => ({
    name: env,
    description: '',
    env_variable: env,
    default_value: value,
    user_viewable: true,
    user_editable: true,
    rules: 'nullable|string',
  });
  return {
    meta: { version: 'PTDL_v2' },
    uuid: `shells-${name}`,
    name,
    docker_images: { Test: options.image ?? 'example/none' },
    startup,
    config: { files: '{}', startup: '{}', logs: '{}', stop: '^C' },
    scripts: {
      installation: options.install
        ? { ...options.install, container: options.image ?? 'example/none' }
        : { script: '', container: 'debian', entrypoint: 'bash' },
    },
    variables: [
      variable('MOTD', 'sunny'),
      ...Object.entries(HOSTILE).map(([env, value]) => variable(env, value)),
    ],
  };
}

async function importEgg(panel: TestPanel, admin: Session, body: unknown): Promise<string> {
  const response = await panel.app.inject({
    method: 'POST',
    url: '/api/templates/import',
    headers: admin.headers,
    payload: body as Record<string, unknown>,
  });
  assert.equal(response.statusCode, 200, response.body);
  return json<{ data: { id: string } }>(response).data.id;
}

async function createFrom(
  panel: TestPanel,
  admin: Session,
  name: string,
  template: string,
  extra: Record<string, unknown> = {},
): Promise<void> {
  const response = await panel.app.inject({
    method: 'POST',
    url: '/api/servers/create',
    headers: admin.headers,
    payload: { name, template, ...extra },
  });
  assert.equal(response.statusCode, 200, response.body);
}

/** The console once it has a line containing `text`. */
async function consoleWith(
  panel: TestPanel,
  admin: Session,
  name: string,
  text: string,
): Promise<string[]> {
  return eventually(async () => {
    const lines = await historyOf(panel, admin, name);
    return lines.some((line) => line.includes(text)) ? lines : undefined;
  }, `"${text}" in the console of ${name}`);
}

async function installed(panel: TestPanel, admin: Session, name: string): Promise<string[]> {
  return consoleWith(panel, admin, name, '[panel] installed');
}

/** Every value printed quoted (`[value]`) and unquoted, as text, by the start command. */
const PRINT_VALUES = Object.keys(HOSTILE)
  .map((env) => `printf '[%s]\\n' "{{${env}}}"; echo unquoted {{${env}}}`)
  .join('; ');

function assertValuesAsText(lines: string[]): void {
  for (const expected of ['[$(id)]', '[`id`]', '[;id]', '[first', 'second]', "[it's]"])
    assert.ok(lines.includes(expected), `${expected} in ${lines.join(' | ')}`);
  for (const expected of [
    'unquoted $(id)',
    'unquoted `id`',
    'unquoted ;id',
    'unquoted first second',
    "unquoted it's",
  ])
    assert.ok(lines.includes(expected), `${expected} in ${lines.join(' | ')}`);
  assert.ok(!lines.some((line) => /uid=\d+/.test(line)), 'no value ran as a command');
}

describe('shells of the process runtime', () => {
  let panel: TestPanel;
  let admin: Session;

  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite);
    admin = await register(panel, 'admin');
  });

  it("runs a start command with the host's bash, values staying text", async () => {
    const id = await importEgg(
      panel,
      admin,
      egg('Bash start', `${BASH_ONLY}; ${PRINT_VALUES}; exec sleep 600`),
    );
    await createFrom(panel, admin, 'bash-start', id);
    assert.equal((await serverAction(panel, admin, 'bash-start', 'start')).statusCode, 200);
    const lines = await consoleWith(panel, admin, 'bash-start', "[it's]");
    for (const line of ['double brackets: yes', 'substituted: process', 'bash present'])
      assert.ok(lines.includes(line), `${line} in ${lines.join(' | ')}`);
    assert.ok(!lines.some((line) => line.includes('has no bash')), lines.join(' | '));
    assertValuesAsText(lines);
    await serverAction(panel, admin, 'bash-start', 'kill');
  });

  it('runs an ash install script with busybox ash, and a bash one with bash', async () => {
    const ash = await importEgg(
      panel,
      admin,
      egg('Ash install', 'exec sleep 600', {
        install: {
          entrypoint: 'ash',
          // What dash gets wrong and ash does not: `echo -e`, `==` in `[ ]`.
          script: 'echo -e "escaped\\tTAB"\nX=y\nif [ "$X" == "y" ]; then echo "equal: yes"; fi',
        },
      }),
    );
    await createFrom(panel, admin, 'ash-install', ash);
    const lines = await installed(panel, admin, 'ash-install');
    assert.ok(lines.includes('escaped\tTAB'), lines.join(' | '));
    assert.ok(lines.includes('equal: yes'), lines.join(' | '));
    assert.ok(
      lines.includes('[panel] this host has no ash: the install script runs with busybox ash'),
      lines.join(' | '),
    );

    const bash = await importEgg(
      panel,
      admin,
      egg('Bash install', 'exec sleep 600', {
        install: { entrypoint: 'bash', script: '[[ "$MOTD" == sun* ]] && echo "bash install"' },
      }),
    );
    await createFrom(panel, admin, 'bash-install', bash);
    const bashLines = await installed(panel, admin, 'bash-install');
    assert.ok(bashLines.includes('bash install'), bashLines.join(' | '));
  });
});

describe('shells of the docker runtime', { skip: docker.ok ? false : docker.why }, () => {
  let panel: TestPanel;
  let admin: Session;

  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite, docker.ok ? { DOCKER_HOST: docker.dockerHost } : {});
    admin = await register(panel, 'admin');
  });

  it("runs a start command with the image's bash, values staying text", async () => {
    if (!docker.ok) return;
    const image = await bashImageForTests(docker.docker);
    const id = await importEgg(
      panel,
      admin,
      egg('Bash image', `${BASH_ONLY}; ${PRINT_VALUES}; exec sleep 600`, { image }),
    );
    await createFrom(panel, admin, 'bash-image', id, { runtime: 'docker' });
    assert.equal((await serverAction(panel, admin, 'bash-image', 'start')).statusCode, 200);
    const lines = await consoleWith(panel, admin, 'bash-image', "[it's]");
    for (const line of ['double brackets: yes', 'substituted: process', 'bash present'])
      assert.ok(lines.includes(line), `${line} in ${lines.join(' | ')}`);
    assert.ok(!lines.some((line) => line.includes('has no bash')), lines.join(' | '));
    assertValuesAsText(lines);
    await serverAction(panel, admin, 'bash-image', 'kill');
  });

  it('falls back to sh in an image without bash, saying so; ash installs run busybox ash', async () => {
    if (!docker.ok) return;
    const id = await importEgg(
      panel,
      admin,
      egg('No bash image', `echo "shell: started"; ${PRINT_VALUES}; exec sleep 600`, {
        image: docker.image,
        install: {
          entrypoint: 'ash',
          script: 'echo -e "escaped\\tTAB"\nif [ "$MOTD" == "sunny" ]; then echo "equal: yes"; fi',
        },
      }),
    );
    await createFrom(panel, admin, 'no-bash', id, { runtime: 'docker' });
    const installLines = await installed(panel, admin, 'no-bash');
    assert.ok(
      installLines.includes(
        `[panel] the image ${docker.image} has no ash: the install script runs with busybox ash`,
      ),
      installLines.join(' | '),
    );
    assert.ok(installLines.includes('escaped\tTAB'), installLines.join(' | '));
    assert.ok(installLines.includes('equal: yes'), installLines.join(' | '));

    assert.equal((await serverAction(panel, admin, 'no-bash', 'start')).statusCode, 200);
    const lines = await consoleWith(panel, admin, 'no-bash', "[it's]");
    assert.ok(
      lines.includes(
        `[panel] the image ${docker.image} has no bash: the start command runs with sh`,
      ),
      lines.join(' | '),
    );
    assert.ok(lines.includes('shell: started'), lines.join(' | '));
    assertValuesAsText(lines);
    await serverAction(panel, admin, 'no-bash', 'kill');
  });
});
