/**
 * The Nodes page without React: a node's health, connection and capacity in words, the forms'
 * text turned into the API's bodies (capacity in GiB, overallocation in percent), and the API's
 * refusals placed under the field they name (docs/nodes.md, docs/api.md "Nodes").
 *
 * The browser checks only what the API cannot see or would say in a validator's words: an empty
 * required field and text that is no number. Every other rule (the name's pattern, what makes a
 * certificate usable, ranges) stays the API's, whose messages are put in sentences here.
 */
import type { ErrorDetail } from '../../api/errors';
import type { Node, NodeChanges, NodeHealth, NewNode } from '../../hooks/useNodes';
import { formatBytes } from '../server/format';

export const GIB = 2 ** 30;

/** The most characters the API takes in one PEM text or key (its schema's `maxLength`). */
export const PEM_MAX_CHARS = 20_000;

/** How the panel reaches a new node's engine. */
export type ConnectionKind = 'tls' | 'ssh';

/** The Add a node form as typed. */
export interface NodeDraft {
  readonly name: string;
  readonly dockerHost: string;
  readonly kind: ConnectionKind;
  readonly ca: string;
  readonly cert: string;
  readonly key: string;
  readonly sshKey: string;
  readonly sshHostKey: string;
  readonly publicAddress: string;
  readonly memoryGiB: string;
  readonly diskGiB: string;
  readonly memoryOverallocate: string;
  readonly diskOverallocate: string;
  readonly maintenance: boolean;
}

export const EMPTY_DRAFT: NodeDraft = {
  name: '',
  dockerHost: '',
  kind: 'tls',
  ca: '',
  cert: '',
  key: '',
  sshKey: '',
  sshHostKey: '',
  publicAddress: '',
  memoryGiB: '',
  diskGiB: '',
  memoryOverallocate: '0',
  diskOverallocate: '0',
  maintenance: false,
};

/** A node's settings as the edit form holds them. */
export type SettingsDraft = Pick<
  NodeDraft,
  'publicAddress' | 'memoryGiB' | 'diskGiB' | 'memoryOverallocate' | 'diskOverallocate'
>;

export type SettingsField = keyof SettingsDraft;
/** Every field of the Add a node form that can be wrong; `tls` is the three PEM texts at once. */
export type NodeField =
  SettingsField | 'name' | 'dockerHost' | 'tls' | 'ca' | 'cert' | 'key' | 'sshKey' | 'sshHostKey';

/** A message per field; a field without a problem is absent. */
export type Problems<F extends string> = Partial<Record<F, string>>;

export const hasProblems = (problems: Problems<string>): boolean =>
  Object.values(problems).some((message) => message !== undefined);

/** The connection an engine address names: `tcp://` is mutual TLS, `ssh://` SSH; else null. */
export function kindOf(dockerHost: string): ConnectionKind | null {
  const text = dockerHost.trim().toLowerCase();
  if (text.startsWith('tcp://')) return 'tls';
  if (text.startsWith('ssh://')) return 'ssh';
  return null;
}

/** Bytes as the form shows them: GiB with at most two decimals; '' for not counted. */
export function gibText(bytes: number | null): string {
  return bytes === null ? '' : String(Math.round((bytes / GIB) * 100) / 100);
}

const GIB_PROBLEM = 'Enter a number of GiB, or leave it empty: not counted';
const PERCENT_PROBLEM = 'Enter a whole number of percent (0: none)';

/** Typed GiB as whole bytes; empty is null (not counted). */
function readGiB(text: string): { value: number | null } | { problem: string } {
  const trimmed = text.trim();
  if (trimmed === '') return { value: null };
  const number = Number(trimmed);
  // The range (no less than 0) is the API's to say.
  return Number.isFinite(number) ? { value: Math.round(number * GIB) } : { problem: GIB_PROBLEM };
}

/** Typed percent as a whole number; empty is 0. */
function readPercent(text: string): { value: number } | { problem: string } {
  const trimmed = text.trim();
  if (trimmed === '') return { value: 0 };
  const number = Number(trimmed);
  return Number.isInteger(number) ? { value: number } : { problem: PERCENT_PROBLEM };
}

/** The capacity fields read, or what is wrong with each. */
function readCapacity(draft: SettingsDraft): {
  values: {
    memoryBytes: number | null;
    diskBytes: number | null;
    memoryOverallocatePercent: number;
    diskOverallocatePercent: number;
  };
  problems: Problems<SettingsField>;
} {
  const problems: Problems<SettingsField> = {};
  const memory = readGiB(draft.memoryGiB);
  const disk = readGiB(draft.diskGiB);
  const memoryOver = readPercent(draft.memoryOverallocate);
  const diskOver = readPercent(draft.diskOverallocate);
  if ('problem' in memory) problems.memoryGiB = memory.problem;
  if ('problem' in disk) problems.diskGiB = disk.problem;
  if ('problem' in memoryOver) problems.memoryOverallocate = memoryOver.problem;
  if ('problem' in diskOver) problems.diskOverallocate = diskOver.problem;
  return {
    values: {
      memoryBytes: 'value' in memory ? memory.value : null,
      diskBytes: 'value' in disk ? disk.value : null,
      memoryOverallocatePercent: 'value' in memoryOver ? memoryOver.value : 0,
      diskOverallocatePercent: 'value' in diskOver ? diskOver.value : 0,
    },
    problems,
  };
}

const MISSING: Readonly<Record<'ca' | 'cert' | 'key' | 'sshKey', string>> = {
  ca: 'Paste the CA certificate (ca.pem), or choose its file',
  cert: 'Paste the client certificate (cert.pem), or choose its file',
  key: 'Paste the client key (key.pem), or choose its file',
  sshKey: 'Paste the private key the panel signs in with, or choose its file',
};

/**
 * `POST /api/admin/nodes`'s body, or what is wrong before anything is sent. Only the chosen
 * connection's material is sent; the other's stays in the form.
 */
export function newNodeBody(
  draft: NodeDraft,
): { body: NewNode } | { problems: Problems<NodeField> } {
  const problems: Problems<NodeField> = {};
  if (draft.name.trim() === '') problems.name = 'Enter a name for the node';
  if (draft.dockerHost.trim() === '')
    problems.dockerHost = "Enter the engine's address: tcp://host:2376 or ssh://user@host";
  const parts = draft.kind === 'tls' ? (['ca', 'cert', 'key'] as const) : (['sshKey'] as const);
  for (const part of parts) if (draft[part].trim() === '') problems[part] = MISSING[part];
  if (draft.publicAddress.trim() === '')
    problems.publicAddress = 'Enter the host name or address players connect to';
  const capacity = readCapacity(draft);
  Object.assign(problems, capacity.problems);
  if (hasProblems(problems)) return { problems };

  const { memoryBytes, diskBytes, ...percents } = capacity.values;
  const sshHostKey = draft.sshHostKey.trim();
  return {
    body: {
      name: draft.name.trim(),
      dockerHost: draft.dockerHost.trim(),
      ...(draft.kind === 'tls'
        ? { tls: { ca: draft.ca, cert: draft.cert, key: draft.key } }
        : { sshKey: draft.sshKey, ...(sshHostKey === '' ? {} : { sshHostKey }) }),
      publicAddress: draft.publicAddress.trim(),
      ...(memoryBytes === null ? {} : { memoryBytes }),
      ...(diskBytes === null ? {} : { diskBytes }),
      ...percents,
      maintenance: draft.maintenance,
    },
  };
}

/** The edit form's first text: the node's settings as saved. */
export function settingsDraftOf(node: Node): SettingsDraft {
  return {
    publicAddress: node.publicAddress ?? '',
    memoryGiB: gibText(node.memoryBytes),
    diskGiB: gibText(node.diskBytes),
    memoryOverallocate: String(node.memoryOverallocatePercent),
    diskOverallocate: String(node.diskOverallocatePercent),
  };
}

/**
 * `PUT /api/admin/nodes/{name}`'s body: only the fields whose text changed (so a capacity saved
 * in bytes that are no whole GiB is not rounded by saving something else), or what is wrong. An
 * emptied public address is null: `local` may have none, another node's refusal is the API's.
 */
export function settingsChanges(
  node: Node,
  draft: SettingsDraft,
): { body: NodeChanges } | { problems: Problems<SettingsField> } {
  const { values, problems } = readCapacity(draft);
  if (hasProblems(problems)) return { problems };
  const before = settingsDraftOf(node);
  const changed = (field: SettingsField) => draft[field].trim() !== before[field];
  const address = draft.publicAddress.trim();
  return {
    body: {
      ...(changed('publicAddress') ? { publicAddress: address === '' ? null : address } : {}),
      ...(changed('memoryGiB') ? { memoryBytes: values.memoryBytes } : {}),
      ...(changed('diskGiB') ? { diskBytes: values.diskBytes } : {}),
      ...(changed('memoryOverallocate')
        ? { memoryOverallocatePercent: values.memoryOverallocatePercent }
        : {}),
      ...(changed('diskOverallocate')
        ? { diskOverallocatePercent: values.diskOverallocatePercent }
        : {}),
    },
  };
}

/** The form's field for each path of the API's details. */
const PATHS: Readonly<Record<string, NodeField>> = {
  'body/name': 'name',
  'body/dockerHost': 'dockerHost',
  'body/tls': 'tls',
  'body/tls/ca': 'ca',
  'body/tls/cert': 'cert',
  'body/tls/key': 'key',
  'body/sshKey': 'sshKey',
  'body/sshHostKey': 'sshHostKey',
  'body/publicAddress': 'publicAddress',
  'body/memoryBytes': 'memoryGiB',
  'body/diskBytes': 'diskGiB',
  'body/memoryOverallocatePercent': 'memoryOverallocate',
  'body/diskOverallocatePercent': 'diskOverallocate',
};

/**
 * Which of the three PEM texts the API's word on `body/tls` is about, when it names one ("ca is
 * not a PEM certificate", "the private key (key) is…", "…; missing: cert, key"); null when it
 * is about the three together.
 */
export function tlsPartOf(message: string): 'ca' | 'cert' | 'key' | null {
  const missing = /missing: (ca|cert|key)\b/.exec(message);
  if (missing !== null) return missing[1] as 'ca' | 'cert' | 'key';
  const subject = /^(ca|cert|key) is\b/.exec(message);
  if (subject !== null) return subject[1] as 'ca' | 'cert' | 'key';
  const named = /\((ca|cert|key)\)/.exec(message);
  if (named !== null) return named[1] as 'ca' | 'cert' | 'key';
  if (message.startsWith('the client certificate')) return 'cert';
  return null;
}

const NAME_RULE =
  'Use lower-case letters (a to z), digits and dashes, at most 32, beginning and ending with a letter or digit';
const ADDRESS_RULE =
  'A host name or IP address: letters, digits, dots, dashes, colons and brackets, no scheme or port';

/** One refused field of the API in a sentence a person reads. */
export function readableDetail(field: NodeField, message: string): string {
  if (message.startsWith('must match pattern')) {
    if (field === 'name') return NAME_RULE;
    if (field === 'publicAddress') return ADDRESS_RULE;
  }
  const length = /must NOT have (fewer|more) than (\d+) characters/.exec(message);
  if (length !== null) {
    return length[1] === 'fewer'
      ? 'Required'
      : `Too long: at most ${Number(length[2]).toLocaleString('en')} characters`;
  }
  const bound = /^must be ([<>]=?) (\d+)(?:, or null)?$/.exec(message);
  if (bound !== null) {
    const limit = Number(bound[2]);
    const shown =
      field === 'memoryGiB' || field === 'diskGiB'
        ? `${gibText(limit)} GiB`
        : field === 'memoryOverallocate' || field === 'diskOverallocate'
          ? `${limit} %`
          : String(limit);
    return bound[1]?.startsWith('<') === true ? `At most ${shown}` : `At least ${shown}`;
  }
  // Anything else (the API's own sentences about certificates, keys and addresses) as it is,
  // begun with a capital.
  return message.charAt(0).toUpperCase() + message.slice(1);
}

/**
 * The API's refusal placed under the fields of `fields` it names; `top` is a refusal of the
 * whole (503 `NODE_UNREACHABLE`: the engine refused or did not answer, the reason in its
 * message), shown at the top of the form; `rest` says that something else is left to show
 * above the button (a refusal naming no field of the form). A taken name (409) belongs under the
 * name. A validator refusing a nullable value says so several times: the first is kept.
 */
export function refusalByField<F extends NodeField>(
  fields: readonly F[],
  error: { code: string; message: string; details: readonly ErrorDetail[] },
): { fields: Problems<F>; top: string | null; rest: boolean } {
  if (error.code === 'NODE_UNREACHABLE') return { fields: {}, top: error.message, rest: false };
  const placed: Problems<NodeField> = {};
  const has = (field: NodeField): boolean => (fields as readonly NodeField[]).includes(field);
  if (error.code === 'ALREADY_EXISTS' && has('name')) {
    placed.name = error.message;
    return { fields: placed, top: null, rest: false };
  }
  let rest = error.details.length === 0;
  for (const detail of error.details) {
    let field = PATHS[detail.path];
    if (field === 'tls') field = tlsPartOf(detail.message) ?? 'tls';
    if (field === undefined || !has(field)) rest = true;
    else placed[field] ??= readableDetail(field, detail.message);
  }
  return { fields: placed, top: null, rest };
}

/** How the panel reaches a node, in words. */
export function connectionText(connection: Node['connection']): string {
  switch (connection) {
    case 'local':
      return 'This machine';
    case 'tls':
      return 'Mutual TLS';
    case 'ssh':
      return 'SSH';
  }
}

/** A node's health as one word (the badge). */
export function healthLabel(health: NodeHealth): string {
  switch (health.status) {
    case 'online':
      return 'Online';
    case 'unreachable':
      return 'Unreachable';
    case 'unknown':
      return 'Checking…';
  }
}

/** "Docker 27.5.1 · linux/amd64", or that the machine has no engine (`local` without one). */
export function engineText(engine: Extract<NodeHealth, { status: 'online' }>['engine']): string {
  const platform = `${engine.os}/${engine.arch}`;
  return engine.version === null
    ? `No Docker engine answers · ${platform}`
    : `Docker ${engine.version} · ${platform}`;
}

/** Why a node is unreachable, as a sentence. */
export function reasonText(reason: string): string {
  const sentence = reason.charAt(0).toUpperCase() + reason.slice(1);
  return /[.!?]$/.test(sentence) ? sentence : `${sentence}.`;
}

/**
 * What the servers' limits on a node add up to against what it offers: "2 GiB of 40 GiB", or,
 * when not counted, "Not counted (2 GiB allocated)".
 */
export function capacityText(allocated: number, capacity: number | null): string {
  return capacity === null
    ? `Not counted (${formatBytes(allocated)} allocated)`
    : `${formatBytes(allocated)} of ${formatBytes(capacity)}`;
}

/** What the capacity is made of, when overallocated: "32 GiB + 25 %"; null otherwise. */
export function capacityNote(offered: number | null, overallocatePercent: number): string | null {
  if (offered === null || overallocatePercent === 0) return null;
  return `${formatBytes(offered)} + ${overallocatePercent} % overallocation`;
}
