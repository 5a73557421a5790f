import { useEffect, useRef, useState } from 'react';
import { useServices } from '../api/context';
import type { ServerStatus } from '../components/StatusBadge';
import {
  createConsoleController,
  type Connection,
  type ConsoleController,
} from '../console/controller';
import { consoleUrl, type Notice } from '../console/protocol';

/** Where the console's output goes: the terminal, once it exists. */
export interface TerminalLike {
  reset(): void;
  write(data: string): void;
}

export interface ConsoleState {
  readonly connection: Connection;
  /** The last refused or failed command's message, until the next command. */
  readonly error: string | null;
  /**
   * The notices of the server's egg features raised in its current run (the game asks for the
   * Minecraft EULA…), one per feature, in order.
   */
  readonly notices: readonly Notice[];
  /** Forgets a feature's notice (it was acted on); a new one brings it back. */
  dismissNotice(feature: string): void;
  send(command: string): boolean;
  reconnect(): void;
  clearError(): void;
}

/**
 * A server's console socket for as long as the component lives: output into `terminal`, status
 * changes to `onStatus`, and a 4401 ends the session (back to sign-in, saying why).
 */
export function useConsole(
  server: string,
  terminal: TerminalLike | null,
  /** A status frame's status; `null` while not connected (what it says may be out of date). */
  onStatus: (status: ServerStatus | null) => void,
): ConsoleState {
  const { sessions } = useServices();
  const [connection, setConnection] = useState<Connection>({ state: 'connecting' });
  const [error, setError] = useState<string | null>(null);
  const [notices, setNotices] = useState<readonly Notice[]>([]);
  const controller = useRef<ConsoleController | null>(null);
  const statusRef = useRef(onStatus);
  useEffect(() => {
    statusRef.current = onStatus;
  }, [onStatus]);

  useEffect(() => {
    if (terminal === null) return;
    const created = createConsoleController({
      url: () => consoleUrl(window.location, server, sessions.getSnapshot().session?.token ?? ''),
      openSocket: (url) => new WebSocket(url),
      sink: {
        reset: () => {
          terminal.reset();
          // The history's connection sends the current run's notices again.
          setNotices([]);
        },
        write: (data) => {
          terminal.write(data);
        },
        status: (status) => {
          statusRef.current(status);
        },
        connection: (next) => {
          setConnection(next);
          if (next.state !== 'open') statusRef.current(null);
          if (next.state === 'closed' && next.reason === 'signed-out') {
            sessions.signOut(next.message);
          }
        },
        error: setError,
        notice: (notice) => {
          setNotices((current) =>
            current.some((known) => known.feature === notice.feature)
              ? current
              : [...current, notice],
          );
        },
      },
      setTimeout: (run, ms) => window.setTimeout(run, ms),
      clearTimeout: (handle) => {
        window.clearTimeout(handle as number);
      },
      now: () => Date.now(),
    });
    controller.current = created;
    return () => {
      created.dispose();
      if (controller.current === created) controller.current = null;
      // Its frames no longer come (another tab is shown): the polled stats speak again.
      statusRef.current(null);
    };
  }, [server, terminal, sessions]);

  return {
    connection,
    error,
    notices,
    dismissNotice: (feature) => {
      setNotices((current) => current.filter((notice) => notice.feature !== feature));
    },
    send: (command) => {
      setError(null);
      return controller.current?.send(command) ?? false;
    },
    reconnect: () => controller.current?.reconnect(),
    clearError: () => {
      setError(null);
    },
  };
}
