/**
 * Image references as the engine reads them (src/domain/image.ts): the registry an image comes
 * from (which the allow-list and the credentials are keyed by), what a pull asks for, the
 * shipped templates' images that are never pulled, and the registry hosts an admin may list.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { neverPulled, parseImage, registryHostProblem, registryOf } from '../src/domain/image.js';

describe('image references', () => {
  it('tells the registry, repository and version a pull asks for', () => {
    const digest = `sha256:${'a'.repeat(64)}`;
    const cases: [string, ReturnType<typeof parseImage>][] = [
      [
        'debian',
        { registry: 'docker.io', repository: 'debian', path: 'debian', version: 'latest' },
      ],
      ['debian:12', { registry: 'docker.io', repository: 'debian', path: 'debian', version: '12' }],
      [
        'ghcr.io/pterodactyl/yolks:java_21',
        {
          registry: 'ghcr.io',
          repository: 'ghcr.io/pterodactyl/yolks',
          path: 'pterodactyl/yolks',
          version: 'java_21',
        },
      ],
      [
        `127.0.0.1:5000/games/x:1@${digest}`,
        {
          registry: '127.0.0.1:5000',
          repository: '127.0.0.1:5000/games/x',
          path: 'games/x',
          version: digest,
        },
      ],
      [
        'localhost:5000/game',
        {
          registry: 'localhost:5000',
          repository: 'localhost:5000/game',
          path: 'game',
          version: 'latest',
        },
      ],
      [
        'localhost/game:1',
        { registry: 'localhost', repository: 'localhost/game', path: 'game', version: '1' },
      ],
      [
        'index.docker.io/library/debian:12',
        {
          registry: 'docker.io',
          repository: 'index.docker.io/library/debian',
          path: 'library/debian',
          version: '12',
        },
      ],
      // A first part without a dot, port or `localhost` is a Docker Hub account.
      [
        'games/minetest:5',
        {
          registry: 'docker.io',
          repository: 'games/minetest',
          path: 'games/minetest',
          version: '5',
        },
      ],
    ];
    for (const [image, expected] of cases) assert.deepEqual(parseImage(image), expected, image);
    assert.equal(registryOf('GHCR.IO/x/y:1'), 'ghcr.io');
  });

  it("never pulls the shipped templates' images from Docker Hub, whoever publishes there", () => {
    for (const image of [
      'game-panel/minetest:5',
      'docker.io/game-panel/debian:bookworm',
      'registry-1.docker.io/game-panel/openttd:13',
    ])
      assert.match(neverPulled(image) ?? '', /never pulled/, image);
    for (const image of ['game-panel-test:1', 'ghcr.io/game-panel/minetest:5', 'debian:12'])
      assert.equal(neverPulled(image), null, image);
  });

  it('lists only hosts an image can name as its registry', () => {
    for (const host of ['ghcr.io', 'localhost', 'localhost:5000', '127.0.0.1:5000', 'docker.io'])
      assert.equal(registryHostProblem(host), null, host);
    for (const host of [
      'registry',
      'x',
      'bad host.io',
      'a.b:0',
      'a.b:65536',
      'Ghcr.io',
      'index.docker.io',
      'a..b',
      '-a.io',
    ])
      assert.notEqual(registryHostProblem(host), null, host);
  });
});
