/**
 * The panel's NodeEngines (src/host/host.ts): what the nodes service asks of engines, answered
 * with ./engine-connection.ts for remote nodes and with this machine's own figures (and its
 * engine's version, when it has one) for `local`.
 */
import os from 'node:os';
import Docker from 'dockerode';
import type { NodeConnection, ProbeAnswer } from '../../domain/node.js';
import type { NodeEngines } from '../host.js';
import { withDeadline } from '../runtime/deadline.js';
import { engineOptions } from '../runtime/docker/engine.js';
import { probeEngine, validateConnection, type EngineConnection } from './engine-connection.js';

/** Node's names of this machine's architecture, as Docker (Go) names them. */
const GO_ARCH: Readonly<Record<string, string>> = { x64: 'amd64', ia32: '386', arm64: 'arm64' };

export const engineConnectionOf = (connection: NodeConnection): EngineConnection =>
  connection.secrets.kind === 'tls'
    ? { dockerHost: connection.dockerHost, tls: connection.secrets }
    : {
        dockerHost: connection.dockerHost,
        sshKey: connection.secrets.privateKey,
        sshHostKey: connection.secrets.hostKey,
      };

/** The field of a node's request a reason is about. */
function fieldOf(connection: NodeConnection, reason: string): string {
  if (reason.includes('sshHostKey')) return 'sshHostKey';
  if (/\btcp:\/\/|\bssh:\/\/|dockerHost|address|port/.test(reason)) return 'dockerHost';
  return connection.secrets.kind === 'tls' ? 'tls' : 'sshKey';
}

export function createNodeEngines(local: {
  readonly dockerHost: string | null;
  readonly dockerCertPath: string | null;
}): NodeEngines {
  return {
    check(connection) {
      const reason = validateConnection(engineConnectionOf(connection));
      return reason === null ? null : { field: fieldOf(connection, reason), message: reason };
    },
    async probe(connection, deadlineMs): Promise<ProbeAnswer> {
      const answer = await probeEngine(engineConnectionOf(connection), { deadlineMs });
      if (!answer.ok) return { ok: false, reason: answer.reason };
      const { version, apiVersion, os: system, arch, cpus, memoryBytes } = answer;
      return {
        ok: true,
        engine: { version, apiVersion, os: system, arch, cpus, memoryBytes },
        sshHostKey: answer.sshHostKey,
      };
    },
    async probeLocal(deadlineMs): Promise<ProbeAnswer> {
      // This machine always answers; its engine, if it has one, tells its version.
      const docker = new Docker({
        ...engineOptions(local.dockerHost, local.dockerCertPath),
        timeout: deadlineMs,
      });
      const engine = await withDeadline(
        docker.version() as Promise<{ Version?: string; ApiVersion?: string }>,
        deadlineMs,
        () => new Error('no answer'),
      ).catch(() => null);
      return {
        ok: true,
        engine: {
          version: engine?.Version ?? null,
          apiVersion: engine?.ApiVersion ?? null,
          os: os.platform(),
          arch: GO_ARCH[os.arch()] ?? os.arch(),
          cpus: os.availableParallelism(),
          memoryBytes: os.totalmem(),
        },
        sshHostKey: null,
      };
    },
  };
}
