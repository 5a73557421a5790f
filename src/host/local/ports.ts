/**
 * Whether another program holds a server's ports: each allocation is bound for a moment, over
 * TCP and UDP (a game uses either), and let go at once. A start whose port is taken is refused
 * with the address and protocol, rather than left to the game's own, often cryptic, failure.
 */
import { createSocket } from 'node:dgram';
import { createServer } from 'node:net';
import type { Allocation } from '../../domain/server.js';
import { AppError } from '../../errors.js';

type Probe = (allocation: Allocation) => Promise<string | null>;

/** The error code of binding `ip:port` over TCP, or null when it could be bound. */
const tcp: Probe = ({ ip, port }) =>
  new Promise((resolve) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) => {
      resolve(error.code ?? 'error');
    });
    server.listen({ host: ip, port, exclusive: true }, () => {
      server.close(() => {
        resolve(null);
      });
    });
  });

const udp: Probe = ({ ip, port }) =>
  new Promise((resolve) => {
    const socket = createSocket(ip.includes(':') ? 'udp6' : 'udp4');
    socket.once('error', (error: NodeJS.ErrnoException) => {
      socket.close();
      resolve(error.code ?? 'error');
    });
    socket.bind({ address: ip, port, exclusive: true }, () => {
      socket.close(() => {
        resolve(null);
      });
    });
  });

/** Refuses (409 PORT_IN_USE) when another program holds one of the allocations. */
export async function checkPortsFree(allocations: readonly Allocation[]): Promise<void> {
  for (const allocation of allocations) {
    for (const [protocol, probe] of [
      ['TCP', tcp],
      ['UDP', udp],
    ] as const) {
      const code = await probe(allocation);
      if (code === 'EADDRINUSE') {
        throw new AppError(
          'PORT_IN_USE',
          `Port ${allocation.port} (${protocol}) on ${allocation.ip} is already in use by another program: stop it, or give the server another port`,
        );
      }
      // EADDRNOTAVAIL: the address is not this host's.
      if (code === 'EADDRNOTAVAIL') {
        throw new AppError(
          'PORT_IN_USE',
          `The address ${allocation.ip} of the server's allocation is not one of this host's`,
        );
      }
    }
  }
}
