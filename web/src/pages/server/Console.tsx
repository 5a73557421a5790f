/**
 * The live console: an xterm.js terminal (fit and search addons) fed by the console socket
 * (useConsole), a find box and the command box. Loaded on its own (React.lazy) so the terminal's
 * code is fetched only when a server page opens.
 */
import { useState } from 'react';
import { Alert } from '../../components/Alert';
import type { ServerStatus } from '../../components/StatusBadge';
import { backoffDelay } from '../../console/protocol';
import { useConsole } from '../../hooks/useConsole';
import { useTerminal } from '../../hooks/useTerminal';
import { FindBox } from './FindBox';
import { CommandBox } from './CommandBox';
import { EulaPrompt } from './EulaPrompt';
import page from '../Page.module.css';
import styles from './Console.module.css';

export default function Console({
  server,
  onStatus,
  canWrite,
  canAcceptEula,
  noInput,
}: {
  server: string;
  onStatus: (status: ServerStatus | null) => void;
  /** Holds `console.write`: without it the console is read-only, with no command box. */
  canWrite: boolean;
  /** Holds `files.write` and `power`: may accept the Minecraft EULA when the game asks. */
  canAcceptEula: boolean;
  /**
   * The name of the server's template when it says its game reads no console input: no command
   * box then, which would do nothing, but a note that says so.
   */
  noInput: string | null;
}) {
  const [attach, terminal] = useTerminal();
  const live = useConsole(server, terminal, onStatus);
  const { connection } = live;
  const [notConnected, setNotConnected] = useState(false);
  const [eulaAccepted, setEulaAccepted] = useState(false);
  const asksEula = live.notices.some((notice) => notice.feature === 'eula');

  const send = (command: string) => {
    const sent = live.send(command);
    setNotConnected(!sent);
    return sent;
  };

  return (
    // Not a region of its own: the terminal is the region named "Console".
    <div className={`${page.card} ${styles.console}`}>
      <div className={styles.bar}>
        <h2 className={styles.title}>Console</h2>
        <p className={styles.connection} role="status">
          {connection.state === 'connecting' && 'Connecting…'}
          {connection.state === 'open' && 'Connected'}
          {connection.state === 'waiting' &&
            `Connection lost; trying again in ${backoffDelay(connection.attempt) / 1000} s`}
          {connection.state === 'closed' && 'Disconnected'}
        </p>
        {(connection.state === 'waiting' ||
          (connection.state === 'closed' && connection.reason === 'fell-behind')) && (
          <button
            type="button"
            className={`button secondary ${styles.small}`}
            onClick={() => {
              live.reconnect();
            }}
          >
            Reconnect
          </button>
        )}
        <FindBox
          onFind={(text, direction) => terminal?.find(text, direction) ?? false}
          disabled={terminal === null}
        />
      </div>
      {connection.state === 'closed' && <Alert tone="error">{connection.message}</Alert>}
      {asksEula && (
        <EulaPrompt
          server={server}
          canAccept={canAcceptEula}
          onAccepted={() => {
            live.dismissNotice('eula');
            setEulaAccepted(true);
          }}
        />
      )}
      {eulaAccepted && !asksEula && (
        <Alert tone="success">
          Minecraft EULA accepted: eula.txt says eula=true, and the server is starting.
        </Alert>
      )}
      <div ref={attach} className={styles.terminal} role="region" aria-label="Console" />
      {live.error !== null && <Alert tone="error">{live.error}</Alert>}
      {notConnected && live.error === null && (
        <Alert tone="error">The console is not connected; the command was not sent</Alert>
      )}
      {noInput !== null ? (
        <p className={page.muted} role="note">
          This game reads no console input (its template, {noInput}, says so): commands typed here
          would do nothing. Use the buttons above to stop or restart it, and its settings or files
          to change it.
        </p>
      ) : canWrite ? (
        <CommandBox server={server} onSend={send} />
      ) : (
        <p className={page.muted}>
          You can read this console but don&apos;t have permission to type commands into it (
          <code>console.write</code>).
        </p>
      )}
    </div>
  );
}
