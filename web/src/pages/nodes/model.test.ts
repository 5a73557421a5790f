import { describe, expect, it } from 'vitest';
import { ApiError } from '../../api/errors';
import type { Node } from '../../hooks/useNodes';
import {
  capacityNote,
  capacityText,
  EMPTY_DRAFT,
  engineText,
  GIB,
  gibText,
  healthLabel,
  kindOf,
  newNodeBody,
  readableDetail,
  reasonText,
  refusalByField,
  settingsChanges,
  settingsDraftOf,
  tlsPartOf,
  type NodeDraft,
  type NodeField,
} from './model';

const node: Node = {
  name: 'eu-1',
  dockerHost: 'tcp://10.0.0.2:2376',
  connection: 'tls',
  publicAddress: 'eu-1.example.com',
  memoryBytes: 32 * GIB,
  diskBytes: null,
  memoryOverallocatePercent: 25,
  diskOverallocatePercent: 0,
  maintenance: false,
  createdAt: '2030-01-01T00:00:00.000Z',
  updatedAt: '2030-01-01T00:00:00.000Z',
  health: { status: 'unknown' },
  servers: [],
  allocated: {
    memoryBytes: 0,
    diskBytes: 0,
    memoryCapacityBytes: 40 * GIB,
    diskCapacityBytes: null,
  },
};

const tlsDraft: NodeDraft = {
  ...EMPTY_DRAFT,
  name: ' eu-1 ',
  dockerHost: ' tcp://10.0.0.2:2376 ',
  ca: 'CA PEM\n',
  cert: 'CERT PEM\n',
  key: 'KEY PEM\n',
  sshKey: 'left from a try with SSH',
  publicAddress: ' eu-1.example.com ',
};

const ALL: readonly NodeField[] = [
  'name',
  'dockerHost',
  'tls',
  'ca',
  'cert',
  'key',
  'sshKey',
  'sshHostKey',
  'publicAddress',
  'memoryGiB',
  'diskGiB',
  'memoryOverallocate',
  'diskOverallocate',
];

describe('the Add a node form', () => {
  it('says what is missing before anything is sent, for the chosen connection only', () => {
    expect(newNodeBody(EMPTY_DRAFT)).toEqual({
      problems: {
        name: 'Enter a name for the node',
        dockerHost: "Enter the engine's address: tcp://host:2376 or ssh://user@host",
        ca: 'Paste the CA certificate (ca.pem), or choose its file',
        cert: 'Paste the client certificate (cert.pem), or choose its file',
        key: 'Paste the client key (key.pem), or choose its file',
        publicAddress: 'Enter the host name or address players connect to',
      },
    });
    const ssh = newNodeBody({ ...EMPTY_DRAFT, kind: 'ssh' });
    expect('problems' in ssh && Object.keys(ssh.problems).sort()).toEqual([
      'dockerHost',
      'name',
      'publicAddress',
      'sshKey',
    ]);
  });

  it('sends the TLS material as pasted and the rest trimmed, not the other kind', () => {
    expect(newNodeBody(tlsDraft)).toEqual({
      body: {
        name: 'eu-1',
        dockerHost: 'tcp://10.0.0.2:2376',
        tls: { ca: 'CA PEM\n', cert: 'CERT PEM\n', key: 'KEY PEM\n' },
        publicAddress: 'eu-1.example.com',
        memoryOverallocatePercent: 0,
        diskOverallocatePercent: 0,
        maintenance: false,
      },
    });
  });

  it('sends an SSH key, and the host key only when given', () => {
    const draft: NodeDraft = {
      ...tlsDraft,
      kind: 'ssh',
      dockerHost: 'ssh://panel@10.0.0.3',
      sshKey: 'OPENSSH KEY',
    };
    const body = newNodeBody(draft);
    expect('body' in body && body.body).toMatchObject({ sshKey: 'OPENSSH KEY' });
    expect('body' in body && 'tls' in body.body).toBe(false);
    expect('body' in body && 'sshHostKey' in body.body).toBe(false);
    const pinned = newNodeBody({ ...draft, sshHostKey: ' ssh-ed25519 AAAA ' });
    expect('body' in pinned && pinned.body.sshHostKey).toBe('ssh-ed25519 AAAA');
  });

  it('turns GiB into whole bytes and percent into numbers; text that is no number is said', () => {
    const body = newNodeBody({
      ...tlsDraft,
      memoryGiB: '1.5',
      diskGiB: '500',
      memoryOverallocate: '25',
      diskOverallocate: '',
    });
    expect('body' in body && body.body).toMatchObject({
      memoryBytes: 1.5 * GIB,
      diskBytes: 500 * GIB,
      memoryOverallocatePercent: 25,
      diskOverallocatePercent: 0,
    });
    expect(newNodeBody({ ...tlsDraft, memoryGiB: '12abc', memoryOverallocate: '2.5' })).toEqual({
      problems: {
        memoryGiB: 'Enter a number of GiB, or leave it empty: not counted',
        memoryOverallocate: 'Enter a whole number of percent (0: none)',
      },
    });
  });

  it('follows the address typed: tcp:// is TLS, ssh:// is SSH', () => {
    expect(kindOf('tcp://10.0.0.2:2376')).toBe('tls');
    expect(kindOf(' SSH://panel@host')).toBe('ssh');
    expect(kindOf('10.0.0.2')).toBeNull();
  });
});

describe("a node's settings", () => {
  it('shows bytes in GiB and sends nothing when nothing changed', () => {
    expect(settingsDraftOf(node)).toEqual({
      publicAddress: 'eu-1.example.com',
      memoryGiB: '32',
      diskGiB: '',
      memoryOverallocate: '25',
      diskOverallocate: '0',
    });
    expect(gibText(100_000_000)).toBe('0.09');
    expect(settingsChanges(node, settingsDraftOf(node))).toEqual({ body: {} });
  });

  it('sends only what changed; an emptied capacity is not counted, an emptied address null', () => {
    expect(
      settingsChanges(node, {
        ...settingsDraftOf(node),
        memoryGiB: '',
        diskGiB: '100',
        publicAddress: ' ',
      }),
    ).toEqual({ body: { memoryBytes: null, diskBytes: 100 * GIB, publicAddress: null } });
  });

  it('keeps bytes that are no whole GiB unless their field is edited', () => {
    const odd = { ...node, memoryBytes: 100_000_000 };
    expect(settingsChanges(odd, { ...settingsDraftOf(odd), diskGiB: '1' })).toEqual({
      body: { diskBytes: GIB },
    });
  });
});

const refusal = (status: number, code: string, message: string, details = []) =>
  new ApiError(status, code, message, null, details);

describe("the API's refusals", () => {
  it('shows an engine that refused or did not answer at the top, with its reason', () => {
    const message =
      "The node's engine at tcp://10.0.0.2:2376 cannot be used: the engine's certificate at 10.0.0.2:2376 is not signed by the CA given (ca); nothing was saved";
    expect(refusalByField(ALL, refusal(503, 'NODE_UNREACHABLE', message))).toEqual({
      fields: {},
      top: message,
      rest: false,
    });
  });

  it('places each detail under its field, a taken name under the name', () => {
    const error = new ApiError(400, 'VALIDATION_FAILED', '…', null, [
      { path: 'body/dockerHost', message: 'the engine address names port 0' },
      { path: 'body/memoryBytes', message: 'must be >= 0, or null' },
      { path: 'body/memoryBytes', message: 'must match a schema in anyOf' },
      { path: 'body/name', message: 'must match pattern "^[a-z0-9]…"' },
    ]);
    expect(refusalByField(ALL, error)).toEqual({
      fields: {
        dockerHost: 'The engine address names port 0',
        memoryGiB: 'At least 0 GiB',
        name: 'Use lower-case letters (a to z), digits and dashes, at most 32, beginning and ending with a letter or digit',
      },
      top: null,
      rest: false,
    });
    expect(
      refusalByField(ALL, refusal(409, 'ALREADY_EXISTS', 'A node named eu-1 exists already'))
        .fields,
    ).toEqual({ name: 'A node named eu-1 exists already' });
  });

  it('puts the word on the TLS material under the part it names, else on the three', () => {
    const at = (message: string) =>
      refusalByField(
        ALL,
        new ApiError(400, 'VALIDATION_FAILED', message, null, [{ path: 'body/tls', message }]),
      ).fields;
    expect(at('ca is not a PEM certificate (-----BEGIN CERTIFICATE-----)')).toEqual({
      ca: 'Ca is not a PEM certificate (-----BEGIN CERTIFICATE-----)',
    });
    expect(
      Object.keys(at('the private key (key) is not the one of the client certificate (cert)')),
    ).toEqual(['key']);
    expect(Object.keys(at('the client certificate expired on Jan  1 00:00:00 2020 GMT'))).toEqual([
      'cert',
    ]);
    expect(Object.keys(at('a tcp:// node needs its CA, the client certificate and key'))).toEqual([
      'tls',
    ]);
    expect(Object.keys(at('an engine needs mutual TLS'))).toEqual(['tls']);
    expect(tlsPartOf('the TLS material needs the CA certificate (ca), …; missing: cert, key')).toBe(
      'cert',
    );
  });

  it('leaves what names no field of the form for the alert above the button', () => {
    const settingsOnly = ['publicAddress', 'memoryGiB'] as const;
    expect(
      refusalByField(
        settingsOnly,
        new ApiError(400, 'VALIDATION_FAILED', '…', null, [
          { path: 'body/tls', message: 'the panel’s own machine is reached as configured' },
        ]),
      ),
    ).toEqual({ fields: {}, top: null, rest: true });
    expect(refusalByField(settingsOnly, refusal(404, 'NOT_FOUND', 'Node not found')).rest).toBe(
      true,
    );
  });

  it('says bounds in the units of the form', () => {
    expect(readableDetail('memoryOverallocate', 'must be <= 1000')).toBe('At most 1000 %');
    expect(readableDetail('dockerHost', 'must NOT have more than 300 characters')).toBe(
      'Too long: at most 300 characters',
    );
    expect(readableDetail('publicAddress', 'must match pattern "x", or null')).toMatch(
      /^A host name or IP address/,
    );
  });
});

describe('a node in words', () => {
  it('says its health, engine and why it is unreachable', () => {
    expect(healthLabel({ status: 'unknown' })).toBe('Checking…');
    expect(
      healthLabel({ status: 'unreachable', checkedAt: node.createdAt, reason: 'no route' }),
    ).toBe('Unreachable');
    const engine = {
      version: '27.5.1',
      apiVersion: '1.47',
      os: 'linux',
      arch: 'amd64',
      cpus: 4,
      memoryBytes: 8 * GIB,
    };
    expect(engineText(engine)).toBe('Docker 27.5.1 · linux/amd64');
    expect(engineText({ ...engine, version: null })).toBe('No Docker engine answers · linux/amd64');
    expect(reasonText('no route to 10.0.0.2 from the panel')).toBe(
      'No route to 10.0.0.2 from the panel.',
    );
  });

  it('says capacity against what is allocated, or that it is not counted', () => {
    expect(capacityText(2 * GIB, 40 * GIB)).toBe('2 GiB of 40 GiB');
    expect(capacityText(2 * GIB, null)).toBe('Not counted (2 GiB allocated)');
    expect(capacityNote(32 * GIB, 25)).toBe('32 GiB + 25 % overallocation');
    expect(capacityNote(32 * GIB, 0)).toBeNull();
    expect(capacityNote(null, 25)).toBeNull();
  });
});
