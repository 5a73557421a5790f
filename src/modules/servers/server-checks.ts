/**
 * The checks of a server's configuration, shared by its creation (servers.service.ts) and its
 * later changes (server-settings.service.ts): template variables against their rules, commands,
 * the image the docker runtime needs (and whether its registry is allowed), and allocations
 * (addresses that are IPs, ports within SERVER_PORT_RANGE, none twice, none another server's,
 * and on a remote node an address of that node). Each refusal is a 400 (or 409 ALLOCATION_TAKEN)
 * naming the field, as the API describes it.
 */
import { BlockList, isIP } from 'node:net';
import { parseCommand } from '../../domain/command.js';
import { LOCAL_NODE } from '../../domain/node.js';
import type { Allocation, ServerConfig } from '../../domain/server.js';
import type { Template, TemplateVariable } from '../../domain/template.js';
import { AppError } from '../../errors.js';
import { checkValue } from '../../templates/rules.js';
import type { ServersRepository } from './servers.repository.js';

/** The ports an allocation may have (SERVER_PORT_RANGE). */
export interface PortRange {
  readonly min: number;
  readonly max: number;
}

/**
 * Why a server may not have `image` (its registry is not allowed: docs/templates.md, "Images"),
 * or null.
 */
export type ImageRefusal = (image: string) => Promise<string | null>;

export const allocationTaken = (): AppError =>
  new AppError('ALLOCATION_TAKEN', "One of the addresses and ports is another server's");

export const unknownVariable = (key: string): AppError =>
  new AppError('VALIDATION_FAILED', `variables.${key}: not a variable of this server`, {
    details: [{ path: `body/variables/${key}`, message: 'not a variable of this server' }],
  });

/**
 * 400 `IMAGE_NOT_ALLOWED` when the docker runtime would pull `config.image` from a registry not
 * allowed; any image when `imageRefusal` is not given (unit tests).
 */
export async function checkImageAllowed(
  config: Pick<ServerConfig, 'runtime' | 'image'>,
  imageRefusal: ImageRefusal | undefined,
): Promise<void> {
  if (config.runtime !== 'docker' || config.image === null) return;
  const refused = (await imageRefusal?.(config.image)) ?? null;
  if (refused !== null) {
    throw new AppError('IMAGE_NOT_ALLOWED', `image: ${refused}`, {
      details: [{ path: 'body/image', message: refused }],
    });
  }
}

/** Addresses are IPs, ports within the configured range, none twice. */
export function checkAllocations(
  allocations: readonly Allocation[],
  { min, max }: PortRange,
): Allocation[] {
  const seen = new Set<string>();
  return allocations.map((allocation, index) => {
    const path = `body/allocations/${index}`;
    const fail = (message: string) =>
      new AppError('VALIDATION_FAILED', `allocations[${index}]: ${message}`, {
        details: [{ path, message }],
      });
    if (isIP(allocation.ip) === 0) throw fail(`${allocation.ip} is not an IP address`);
    if (allocation.port < min || allocation.port > max)
      throw fail(`port must be between ${min} and ${max}`);
    const key = `${allocation.ip}:${allocation.port}`;
    if (seen.has(key)) throw fail(`${key} is listed twice`);
    seen.add(key);
    return { ip: allocation.ip, port: allocation.port };
  });
}

/** A node as a server's allocations are checked against it. */
export interface NodeAddress {
  readonly name: string;
  /** What players connect to (docs/nodes.md, "Adding a node"); null on `local` alone. */
  readonly publicAddress: string | null;
}

/** Whether `a` and `b` are the same IP address, however each is written (`::1`, `0::1`). */
function sameAddress(a: string, b: string): boolean {
  const family = isIP(a);
  if (family === 0 || family !== isIP(b)) return false;
  const list = new BlockList();
  list.addAddress(a, family === 4 ? 'ipv4' : 'ipv6');
  return list.check(b, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * On a remote node an allocation names an address of that node: every address (0.0.0.0, ::) or
 * its public address, when that is an IP (docs/nodes.md, "Placement"). The panel cannot know the
 * other addresses of a node, and a port published on an address the node does not have fails
 * only at the start, on the node. `local` takes any address: its start binds each one first.
 * 400 naming the allocation's `ip` otherwise.
 */
export function checkNodeAddresses(allocations: readonly Allocation[], node: NodeAddress): void {
  const foreign = foreignAddress(allocations, node);
  if (foreign === null) return;
  const { index, message } = foreign;
  throw new AppError('VALIDATION_FAILED', `allocations[${index}].ip: ${message}`, {
    details: [{ path: `body/allocations/${index}/ip`, message }],
  });
}

/**
 * The first allocation that names no address of `node` (see checkNodeAddresses): its index and
 * why, in words; null when each one does.
 */
export function foreignAddress(
  allocations: readonly Allocation[],
  node: NodeAddress,
): { readonly index: number; readonly message: string } | null {
  if (node.name === LOCAL_NODE) return null;
  const own = node.publicAddress;
  const index = allocations.findIndex(
    (allocation) =>
      !isWildcard(allocation.ip) && !(own !== null && sameAddress(allocation.ip, own)),
  );
  const allocation = allocations[index];
  if (allocation === undefined) return null;
  const accepted =
    own !== null && isIP(own) !== 0
      ? `0.0.0.0 (every address of the node) or its public address ${own}`
      : `0.0.0.0 (every address of the node): its public address ${own ?? ''} is not an IP address`;
  return {
    index,
    message: `${allocation.ip} is not an address of node ${node.name}: use ${accepted}`,
  };
}

/**
 * Refuses an address and port another server than `name` has on `node`, counting a wildcard
 * address (0.0.0.0, ::) as every address of the node. Servers on other nodes never clash
 * (docs/nodes.md, "Placement").
 */
export async function refuseTakenAllocations(
  servers: Pick<ServersRepository, 'allAllocations'>,
  name: string,
  node: string,
  allocations: readonly Allocation[],
): Promise<void> {
  const taken = (await servers.allAllocations(node)).filter((a) => a.server !== name);
  for (const allocation of allocations) {
    const clash = taken.find(
      (other) =>
        other.port === allocation.port &&
        (other.ip === allocation.ip || isWildcard(other.ip) || isWildcard(allocation.ip)),
    );
    if (clash) {
      throw new AppError(
        'ALLOCATION_TAKEN',
        `${allocation.ip}:${allocation.port} is taken: server ${clash.server} has ${clash.ip}:${clash.port}`,
      );
    }
  }
}

const isWildcard = (ip: string): boolean => ip === '0.0.0.0' || ip === '::';

/**
 * The values of every template variable: `values` over the defaults, each checked against its
 * rules (400 naming the first that fails). `checked`: the names to check (all by default; a
 * change checks what it changes, so a template whose default breaks its own rule stays usable).
 */
export function templateValues(
  template: Template,
  values: Readonly<Record<string, string>>,
  checked?: readonly string[],
): Record<string, string> {
  const known = new Set(template.variables.map((variable) => variable.envVariable));
  for (const key of Object.keys(values)) {
    if (!known.has(key)) throw unknownVariable(key);
  }
  const result: Record<string, string> = {};
  for (const variable of template.variables) {
    result[variable.envVariable] = Object.hasOwn(values, variable.envVariable)
      ? (values[variable.envVariable] ?? '')
      : variable.defaultValue;
  }
  // Checked once all are known: a rule may compare with another variable (`gt:environment.MIN`).
  for (const variable of template.variables) {
    if (checked === undefined || checked.includes(variable.envVariable))
      checkVariable(variable, result[variable.envVariable] ?? '', result);
  }
  return result;
}

function checkVariable(
  variable: TemplateVariable,
  value: string,
  fields: Readonly<Record<string, string>>,
): void {
  const problem = checkValue(variable.rules, value === '' ? null : value, fields);
  if (problem !== null) {
    throw new AppError('VALIDATION_FAILED', `variables.${variable.envVariable}: ${problem}`, {
      details: [{ path: `body/variables/${variable.envVariable}`, message: problem }],
    });
  }
  if (/[\0]/.test(value)) {
    throw new AppError(
      'VALIDATION_FAILED',
      `variables.${variable.envVariable}: must not hold NUL`,
      {
        details: [{ path: `body/variables/${variable.envVariable}`, message: 'must not hold NUL' }],
      },
    );
  }
}

/** The docker runtime runs an image: it needs one. */
export function checkImage(config: Pick<ServerConfig, 'runtime' | 'image'>): void {
  if (config.runtime === 'docker' && config.image === null) {
    throw new AppError('VALIDATION_FAILED', 'image: the docker runtime needs an image', {
      details: [{ path: 'body/image', message: 'the docker runtime needs an image' }],
    });
  }
}

/** A start command run without a shell: it must parse as a program and its arguments. */
export function checkCommand(field: string, command: string): void {
  const parsed = parseCommand(command);
  if (!parsed.ok) {
    throw new AppError('VALIDATION_FAILED', `${field}: ${parsed.reason}`, {
      details: [{ path: `body/${field}`, message: parsed.reason }],
    });
  }
}

/** A stop command is a line typed into the console, not a program: it only must be one line. */
export function checkCommandText(field: string, command: string): void {
  if (/[\r\n]/.test(command)) {
    throw new AppError('VALIDATION_FAILED', `${field}: must be a single line`, {
      details: [{ path: `body/${field}`, message: 'must be a single line' }],
    });
  }
}
