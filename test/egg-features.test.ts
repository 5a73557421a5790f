/**
 * What eggs' features promise (docs/templates.md): the lines each feature watches for, raised once
 * per run from the game's own output (a real child process printing them), told to the console
 * as a `[panel] …` line and to every socket as a `notice` frame (and again to a socket opened
 * later, until the next start); an install watched too; the EULA accepted through the API (rights,
 * eula.txt written, the server started); and the template's images chosen by users with
 * `settings`, never another image, never over an admin's choice.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { WebSocket } from 'ws';
import {
  FEATURE_LINES,
  FEATURES,
  featureOfLine,
  featuresOf,
  noticeOf,
  type Feature,
} from '../src/domain/features.js';
import { startPanel, suiteScope, type TestPanel } from './helpers/app.js';
import {
  assertError,
  eventually,
  gameServerCommand,
  historyOf,
  json,
  register,
  sendCommand,
  serverAction,
  stats,
  type Session,
} from './helpers/factories.js';

const IMAGES = {
  'Java 21': 'ghcr.io/pterodactyl/yolks:java_21',
  'Java 17': 'ghcr.io/pterodactyl/yolks:java_17',
  'Java 8': 'ghcr.io/pterodactyl/yolks:java_8',
};

/** A PTDL_v2 egg running the stand-in game server with `features`. */
function featureEgg(
  name: string,
  features: string[],
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    meta: { version: 'PTDL_v2' },
    uuid: `features-${Math.random().toString(36).slice(2)}`,
    name,
    author: 'tests@example.com',
    description: 'The stand-in game server, with egg features',
    features,
    docker_images: IMAGES,
    startup: gameServerCommand(),
    config: {
      files: '{}',
      startup: JSON.stringify({ done: 'Done!' }),
      logs: '{}',
      stop: 'stop',
    },
    scripts: { installation: { script: '', container: 'debian', entrypoint: 'bash' } },
    variables: [],
    ...overrides,
  };
}

interface Frame {
  readonly type: string;
  readonly lines?: string[];
  readonly feature?: string;
  readonly message?: string;
}

/** How each feature's `[panel] …` line begins. */
const PANEL_LINE: Readonly<Record<Feature, string>> = {
  eula: '[panel] the game runs only once the Minecraft EULA (https://aka.ms/MinecraftEULA) is accepted',
  java_version: '[panel] the game needs another Java version',
  pid_limit: '[panel] the game could not start a new thread',
  steam_disk_space: '[panel] SteamCMD could not install or update the game',
};

/** What each feature's line looks like in a real game's output. */
const GAME_LINES: Readonly<Record<Feature, string>> = {
  eula: '[ServerMain/WARN]: You need to agree to the EULA in order to run the server. Go to eula.txt for more info.',
  java_version:
    'Error: LinkageError occurred while loading main class net.minecraft.bundler.Main java.lang.UnsupportedClassVersionError: class file version 65.0',
  pid_limit:
    'Exception in thread "main" java.lang.OutOfMemoryError: unable to create native thread: possibly out of memory or process/resource limits reached',
  steam_disk_space: "Error! App '740' state is 0x202 after update job.",
};

describe('egg features', () => {
  describe('the lines each feature watches for', () => {
    it('finds each feature in its own lines, ignoring case, and only among those watched', () => {
      for (const feature of FEATURES) {
        assert.equal(featureOfLine(GAME_LINES[feature], FEATURES), feature);
        assert.equal(featureOfLine(GAME_LINES[feature].toUpperCase(), [feature]), feature);
        assert.equal(
          featureOfLine(
            GAME_LINES[feature],
            FEATURES.filter((f) => f !== feature),
          ),
          null,
        );
        for (const line of FEATURE_LINES[feature]) {
          assert.equal(featureOfLine(`[12:00:00] ${line} (and more)`, [feature]), feature);
        }
      }
      assert.equal(featureOfLine('[Server] Done (3.2s)! For help, type "help"', FEATURES), null);
      assert.equal(
        featureOfLine('Unsupported Java detected (65.0). Only up to Java 19 is supported.', [
          'java_version',
        ]),
        'java_version',
      );
    });

    it("reads a template's features ignoring case, keeping only those the panel acts on", () => {
      assert.deepEqual(featuresOf({ features: ['EULA', 'gsl_token', 'Pid_Limit', 'eula'] }), [
        'eula',
        'pid_limit',
      ]);
      assert.deepEqual(featuresOf(null), []);
    });

    it('says which images may be chosen after a Java version error, and who may choose', () => {
      const template = {
        dockerImages: Object.entries(IMAGES).map(([name, image]) => ({ name, image })),
      };
      const server = {
        name: 'mc',
        runtime: 'docker' as const,
        image: IMAGES['Java 8'],
        limits: { memoryBytes: null, cpuPercent: null, pids: 256, diskBytes: null },
      };
      const listed = noticeOf('java_version', server, template).message;
      assert.match(listed, /settings permission/);
      assert.match(listed, /Java 21 \(ghcr\.io\/pterodactyl\/yolks:java_21\)/);
      assert.match(listed, /Java 17 \(ghcr\.io\/pterodactyl\/yolks:java_17\)/);
      assert.ok(!listed.includes('Java 8 ('), 'the current image is not offered again');
      const byAdmin = noticeOf('java_version', { ...server, image: 'example/own:1' }, template);
      assert.match(byAdmin.message, /set by an admin.*only an admin may change it/);
      const single = noticeOf('java_version', server, {
        dockerImages: [{ name: 'Java 8', image: IMAGES['Java 8'] }],
      });
      assert.match(single.message, /the only one its template offers/);
      const asProcess = noticeOf('java_version', { ...server, runtime: 'process' }, template);
      assert.match(asProcess.message, /host's Java/);
      assert.match(noticeOf('pid_limit', server, template).message, /process limit \(256 /);
      assert.match(
        noticeOf('pid_limit', { ...server, limits: { ...server.limits, pids: null } }, null)
          .message,
        /no process limit of its own/,
      );
    });
  });

  describe('through the panel', () => {
    let panel: TestPanel;
    let admin: Session;
    let user: Session;

    const importEgg = async (egg: Record<string, unknown>): Promise<string> => {
      const response = await panel.app.inject({
        method: 'POST',
        url: '/api/templates/import',
        headers: admin.headers,
        payload: egg,
      });
      assert.equal(response.statusCode, 200, response.body);
      return json<{ data: { id: string } }>(response).data.id;
    };

    const createServer = async (payload: Record<string, unknown>) => {
      const response = await panel.app.inject({
        method: 'POST',
        url: '/api/servers/create',
        headers: admin.headers,
        payload,
      });
      assert.equal(response.statusCode, 200, response.body);
    };

    /** Gives the user `server` with exactly `permissions`. */
    const grant = async (server: string, permissions: string[]) => {
      const response = await panel.app.inject({
        method: 'PUT',
        url: `/api/servers/${server}/users/player`,
        headers: admin.headers,
        payload: { permissions },
      });
      assert.equal(response.statusCode, 200, response.body);
    };

    const statusOf = async (name: string, wanted: string) =>
      eventually(
        async () => ((await stats(panel, admin, name)).status === wanted ? true : undefined),
        `${name} to be ${wanted}`,
      );

    /** A console socket and every frame it has received so far. */
    const openConsole = async (name: string) => {
      const base = await panel.listen();
      const socket = new WebSocket(`${base.replace('http', 'ws')}/ws/servers/${name}/console`, {
        headers: admin.headers,
      });
      const frames: Frame[] = [];
      socket.on('message', (data: Buffer) => {
        frames.push(JSON.parse(data.toString()) as Frame);
      });
      await once(socket, 'open');
      return {
        frames,
        lines: () => frames.flatMap((frame) => frame.lines ?? []),
        /** Waits for a frame `match` accepts, and answers its index. */
        until: (match: (frame: Frame) => boolean, what: string) =>
          eventually(() => {
            const index = frames.findIndex(match);
            return index < 0 ? undefined : index;
          }, what),
        close: () => {
          socket.close();
        },
      };
    };

    const hasLine = (text: string) => (frame: Frame) =>
      frame.lines?.some((line) => line.includes(text)) === true;

    const suite = suiteScope();
    before(async () => {
      panel = await startPanel(suite);
      admin = await register(panel, 'admin');
      user = await register(panel, 'player');
    });

    it("raises each feature once per run, from the game's own lines, on every socket", async () => {
      const id = await importEgg(featureEgg('Watched', [...FEATURES]));
      await createServer({ name: 'watched', template: id });
      assert.equal((await serverAction(panel, admin, 'watched', 'start')).statusCode, 200);
      await statusOf('watched', 'running');
      const live = await openConsole('watched');
      try {
        await live.until((frame) => frame.type === 'history', 'the history');
        for (const feature of FEATURES) {
          // Twice: the second time raises nothing. The typed command's echo, a line of the panel's
          // own holding the same words, never counts.
          for (let i = 0; i < 2; i += 1) {
            const sent = await sendCommand(panel, admin, 'watched', `say ${GAME_LINES[feature]}`);
            assert.equal(sent.statusCode, 200, sent.body);
          }
          const notice = await live.until(
            (frame) => frame.type === 'notice' && frame.feature === feature,
            `the ${feature} notice`,
          );
          const said = await live.until(hasLine(`[Server] ${GAME_LINES[feature]}`), 'the line');
          assert.ok(notice > said, 'the notice comes after the line that raised it');
          assert.ok(
            `[panel] ${live.frames[notice]?.message ?? ''}`.startsWith(PANEL_LINE[feature]),
          );
        }
        await sendCommand(panel, admin, 'watched', 'say marker');
        await live.until(hasLine('[Server] marker'), 'the marker');
        for (const feature of FEATURES) {
          const panelLines = live.lines().filter((line) => line.startsWith(PANEL_LINE[feature]));
          assert.equal(panelLines.length, 1, `one ${feature} line: ${panelLines.join(' | ')}`);
          assert.equal(
            live.frames.filter((frame) => frame.type === 'notice' && frame.feature === feature)
              .length,
            1,
          );
        }
      } finally {
        live.close();
      }

      // A console opened later gets this run's notices right after the history.
      const later = await openConsole('watched');
      try {
        await later.until(
          (frame) => frame.type === 'notice' && frame.feature === FEATURES.at(-1),
          'the notices',
        );
        assert.equal(later.frames[0]?.type, 'history');
        assert.deepEqual(
          later.frames.slice(1, 1 + FEATURES.length).map((frame) => frame.feature),
          FEATURES,
        );
      } finally {
        later.close();
      }

      // A new run forgets them.
      assert.equal((await serverAction(panel, admin, 'watched', 'restart')).statusCode, 200);
      await statusOf('watched', 'running');
      const fresh = await openConsole('watched');
      try {
        await sendCommand(panel, admin, 'watched', 'say after the restart');
        await fresh.until(hasLine('[Server] after the restart'), 'the line after the restart');
        assert.deepEqual(
          fresh.frames.filter((frame) => frame.type === 'notice'),
          [],
        );
      } finally {
        fresh.close();
      }
      await serverAction(panel, admin, 'watched', 'stop');
    });

    it('watches nothing for a template without the feature', async () => {
      const id = await importEgg(featureEgg('Unwatched', ['gsl_token']));
      await createServer({ name: 'unwatched', template: id });
      await serverAction(panel, admin, 'unwatched', 'start');
      await statusOf('unwatched', 'running');
      const live = await openConsole('unwatched');
      try {
        for (const feature of FEATURES)
          await sendCommand(panel, admin, 'unwatched', `say ${GAME_LINES[feature]}`);
        await sendCommand(panel, admin, 'unwatched', 'say marker');
        await live.until(hasLine('[Server] marker'), 'the marker');
        // The notices, had there been any, are told as soon as the batch with their line is sent.
        await new Promise((resolve) => setTimeout(resolve, 100));
        assert.deepEqual(
          live.frames.filter((frame) => frame.type === 'notice'),
          [],
        );
        for (const feature of FEATURES)
          assert.ok(!live.lines().some((line) => line.startsWith(PANEL_LINE[feature])));
      } finally {
        live.close();
      }
      await serverAction(panel, admin, 'unwatched', 'stop');
    });

    it("watches an install's output too", async () => {
      const id = await importEgg(
        featureEgg('Steam install', ['steam_disk_space'], {
          scripts: {
            installation: {
              script: `echo "${GAME_LINES.steam_disk_space}"\nexit 8`,
              container: 'debian',
              entrypoint: 'sh',
            },
          },
        }),
      );
      await createServer({ name: 'steamy', template: id });
      const live = await openConsole('steamy');
      try {
        const notice = await live.until(
          (frame) => frame.type === 'notice' && frame.feature === 'steam_disk_space',
          'the SteamCMD notice',
        );
        assert.match(live.frames[notice]?.message ?? '', /250 MB free/);
        await eventually(
          () =>
            live.lines().some((line) => line.startsWith(PANEL_LINE.steam_disk_space))
              ? true
              : undefined,
          'the SteamCMD panel line',
        );
      } finally {
        live.close();
      }
    });

    describe('the Minecraft EULA', () => {
      let eulaTemplate = '';

      before(async () => {
        eulaTemplate = await importEgg(
          featureEgg('Minecraft-like', ['eula', 'java_version', 'pid_limit'], {
            startup: gameServerCommand('--eula'),
          }),
        );
      });

      const accept = (name: string, session: Session) =>
        panel.app.inject({
          method: 'POST',
          url: `/api/servers/${name}/eula`,
          headers: session.headers,
        });

      it('asks for it when the game does, and once accepted writes eula.txt and starts', async () => {
        await createServer({ name: 'mc', template: eulaTemplate });
        await serverAction(panel, admin, 'mc', 'start');
        // The game prints its EULA line and ends, as Minecraft does.
        await statusOf('mc', 'crashed');
        const console = await openConsole('mc');
        try {
          const notice = await console.until(
            (frame) => frame.type === 'notice' && frame.feature === 'eula',
            'the EULA notice after the history',
          );
          assert.equal(notice, 1, 'right after the history');
          assert.ok(console.lines().some((line) => line.startsWith(PANEL_LINE.eula)));
        } finally {
          console.close();
        }
        const folder = path.join(panel.config.serversDir, 'mc');
        assert.equal(await readFile(path.join(folder, 'eula.txt'), 'utf8'), 'eula=false\n');

        // It writes a file and starts the server: files.write and power, each named when missing.
        await grant('mc', ['files.write']);
        const noPower = await accept('mc', user);
        assertError(noPower, 403, 'FORBIDDEN');
        assert.match(json<{ message: string }>(noPower).message, /power/);
        await grant('mc', ['power']);
        const noFiles = await accept('mc', user);
        assertError(noFiles, 403, 'FORBIDDEN');
        assert.match(json<{ message: string }>(noFiles).message, /files\.write/);
        assert.equal(await readFile(path.join(folder, 'eula.txt'), 'utf8'), 'eula=false\n');

        await grant('mc', ['files.write', 'power']);
        const accepted = await accept('mc', user);
        assert.equal(accepted.statusCode, 200, accepted.body);
        const answer = json<{ data: { name: string; status: string } }>(accepted).data;
        assert.equal(answer.name, 'mc');
        assert.ok(['starting', 'running'].includes(answer.status), answer.status);
        assert.match(await readFile(path.join(folder, 'eula.txt'), 'utf8'), /^eula=true$/m);
        await statusOf('mc', 'running');
        const { pid } = await stats(panel, admin, 'mc');

        // Accepted again while it runs: the file is written, the server is not restarted.
        const again = await accept('mc', admin);
        assert.equal(again.statusCode, 200, again.body);
        assert.equal(json<{ data: { status: string } }>(again).data.status, 'running');
        assert.equal((await stats(panel, admin, 'mc')).pid, pid);
        await serverAction(panel, admin, 'mc', 'stop');
      });

      it('does not restart a game that ended asking for its EULA', async () => {
        await createServer({ name: 'mc-restart', template: eulaTemplate, autoRestart: true });
        await serverAction(panel, admin, 'mc-restart', 'start');
        const lines = await eventually(async () => {
          const history = await historyOf(panel, admin, 'mc-restart');
          return history.includes(
            '[panel] not restarting: the game waits for its EULA to be accepted',
          )
            ? history
            : undefined;
        }, 'the panel to say it does not restart');
        assert.ok(
          !lines.some((line) => line.startsWith('[panel] restarting in')),
          lines.join(' | '),
        );
        assert.equal((await stats(panel, admin, 'mc-restart')).status, 'crashed');
      });

      it('refuses a server whose template does not ask for it, and an unknown server', async () => {
        const id = await importEgg(featureEgg('No EULA', ['java_version']));
        await createServer({ name: 'no-eula', template: id });
        const refused = await accept('no-eula', admin);
        assertError(refused, 409, 'CONFLICT');
        assert.match(
          json<{ message: string }>(refused).message,
          /does not ask for the Minecraft EULA/,
        );
        await assert.rejects(readFile(path.join(panel.config.serversDir, 'no-eula', 'eula.txt')));
        assertError(await accept('nope', admin), 404, 'NOT_FOUND');
        const unauthenticated = await panel.app.inject({
          method: 'POST',
          url: '/api/servers/no-eula/eula',
        });
        assertError(unauthenticated, 401);
      });
    });

    describe("the template's images", () => {
      let imagesTemplate = '';

      before(async () => {
        imagesTemplate = await importEgg(featureEgg('Java images', ['java_version']));
      });

      const choose = (name: string, session: Session, image: unknown) =>
        panel.app.inject({
          method: 'PUT',
          url: `/api/servers/${name}/image`,
          headers: session.headers,
          payload: { image },
        });
      const choiceOf = async (name: string, session: Session) => {
        const response = await panel.app.inject({
          url: `/api/servers/${name}/image`,
          headers: session.headers,
        });
        assert.equal(response.statusCode, 200, response.body);
        return json<{
          data: {
            image: string | null;
            images: { name: string; image: string }[];
            choosable: boolean;
            reason: string | null;
          };
        }>(response).data;
      };
      const imageOf = async (name: string) =>
        json<{ data: { image: string | null } }>(
          await panel.app.inject({ url: `/api/servers/${name}/config`, headers: admin.headers }),
        ).data.image;

      it('lets a user with settings choose among them, and nothing else', async () => {
        await createServer({ name: 'java', template: imagesTemplate, runtime: 'docker' });
        assert.equal(await imageOf('java'), IMAGES['Java 21']);
        await grant('java', ['power']);
        assertError(await choose('java', user, IMAGES['Java 17']), 403, 'FORBIDDEN');
        assert.equal(await imageOf('java'), IMAGES['Java 21']);

        await grant('java', ['settings']);
        const choice = await choiceOf('java', user);
        assert.deepEqual(choice.images, [
          { name: 'Java 21', image: IMAGES['Java 21'] },
          { name: 'Java 17', image: IMAGES['Java 17'] },
          { name: 'Java 8', image: IMAGES['Java 8'] },
        ]);
        assert.equal(choice.choosable, true);
        assert.equal(choice.reason, null);
        const chosen = await choose('java', user, IMAGES['Java 17']);
        assert.equal(chosen.statusCode, 200, chosen.body);
        assert.equal(json<{ data: { image: string } }>(chosen).data.image, IMAGES['Java 17']);
        assert.equal(await imageOf('java'), IMAGES['Java 17']);

        for (const image of [
          'example/evil:latest',
          `${IMAGES['Java 17']} `,
          'ghcr.io/pterodactyl/yolks',
        ]) {
          const refused = await choose('java', user, image);
          assertError(refused, 400, 'VALIDATION_FAILED');
          assert.match(
            json<{ message: string }>(refused).message,
            /not one of the template's images/,
          );
        }
        assertError(await choose('java', user, ''), 400, 'VALIDATION_FAILED');
        assertError(await choose('java', user, 42), 400, 'VALIDATION_FAILED');
        assert.equal(await imageOf('java'), IMAGES['Java 17']);
        // The user's other way to the image stays closed.
        const viaConfig = await panel.app.inject({
          method: 'PUT',
          url: '/api/servers/java/config',
          headers: user.headers,
          payload: { image: IMAGES['Java 8'] },
        });
        assertError(viaConfig, 403, 'FORBIDDEN');
      });

      it("keeps an admin's own image the admin's, and a process server has none", async () => {
        await createServer({
          name: 'custom',
          template: imagesTemplate,
          runtime: 'docker',
          image: 'example/own-java:22',
        });
        await grant('custom', ['settings']);
        const choice = await choiceOf('custom', user);
        assert.equal(choice.choosable, false);
        assert.match(choice.reason ?? '', /only an admin may change it/);
        assertError(await choose('custom', user, IMAGES['Java 8']), 403, 'FORBIDDEN');
        assert.equal(await imageOf('custom'), 'example/own-java:22');
        assert.equal((await choose('custom', admin, IMAGES['Java 8'])).statusCode, 200);
        assert.equal(await imageOf('custom'), IMAGES['Java 8']);

        await createServer({ name: 'as-process', template: imagesTemplate });
        await grant('as-process', ['settings']);
        assert.equal((await choiceOf('as-process', user)).choosable, false);
        const refused = await choose('as-process', user, IMAGES['Java 8']);
        assertError(refused, 409, 'CONFLICT');
        assert.match(json<{ message: string }>(refused).message, /runs as a process/);
        assert.equal(await imageOf('as-process'), null);

        await createServer({ name: 'plain', startCommand: gameServerCommand() });
        assertError(await choose('plain', admin, IMAGES['Java 8']), 409, 'CONFLICT');
        assertError(await choose('nope', admin, IMAGES['Java 8']), 404, 'NOT_FOUND');
      });
    });
  });
});
