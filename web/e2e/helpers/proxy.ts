/** A reverse proxy started by a journey: the wait until it listens. */
import type { ChildProcess } from 'node:child_process';
import { connect } from 'node:net';

/** Resolves once `host:port` accepts connections; rejects when `child` exits first. */
export async function waitForPort(
  host: string,
  port: number,
  child: ChildProcess,
  log: () => string,
): Promise<void> {
  for (let attempt = 0; attempt < 150; attempt += 1) {
    if (child.exitCode !== null) throw new Error(`the proxy exited at start:\n${log()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect({ host, port }, () => {
        socket.end();
        resolve(true);
      });
      socket.once('error', () => {
        resolve(false);
      });
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the proxy did not listen on ${host}:${port}:\n${log()}`);
}
