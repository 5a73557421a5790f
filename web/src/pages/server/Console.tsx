/**
 * The live console: an xterm.js terminal (fit and search addons) fed by the console socket
 * (useConsole), a find box and the command box. Loaded on its own (React.lazy) so the terminal's
 * code is fetched only when a server page opens.
 */
import { FitAddon } from '@xterm/addon-fit';
import { SearchAddon } from '@xterm/addon-search';
import { Terminal } from '@xterm/xterm';
import '@xterm/xterm/css/xterm.css';
import { useCallback, useState } from 'react';
import { Alert } from '../../components/Alert';
import type { ServerStatus } from '../../components/StatusBadge';
import { installAdoptedStyles } from '../../console/adoptedStyles';
import { backoffDelay } from '../../console/protocol';
import { useConsole, type TerminalLike } from '../../hooks/useConsole';
import { FindBox } from './FindBox';
import { CommandBox } from './CommandBox';
import { EulaPrompt } from './EulaPrompt';
import page from '../Page.module.css';
import styles from './Console.module.css';

/**
 * The terminal is dark in both themes. Every ANSI colour reads at 4.5:1 or more against its
 * background (WCAG AA; the e2e journeys check it with axe-core): xterm's own red and blue do not.
 */
const THEME = {
  background: '#111412',
  foreground: '#dfe5e0',
  cursor: '#dfe5e0',
  selectionBackground: '#3c5a48',
  black: '#7c827e',
  red: '#f0524f',
  green: '#5cc46a',
  yellow: '#e5c04b',
  blue: '#5c9cf5',
  magenta: '#d67ce8',
  cyan: '#3fc5c5',
  white: '#d0d5d2',
  brightBlack: '#9aa09c',
  brightRed: '#ff7a74',
  brightGreen: '#85e08e',
  brightYellow: '#f5dc7a',
  brightBlue: '#8ab8ff',
  brightMagenta: '#eaa2f7',
  brightCyan: '#7ee0e0',
  brightWhite: '#ffffff',
} as const;

interface SearchableTerminal extends TerminalLike {
  /** Selects and shows the next or previous match; false when there is none. */
  find(text: string, direction: 'next' | 'previous'): boolean;
}

/**
 * The terminal, made when its element is attached and disposed when it goes (a ref callback with
 * its cleanup): the element to attach it to, and the terminal once it exists.
 */
function useTerminal(): [
  (host: HTMLDivElement | null) => (() => void) | undefined,
  SearchableTerminal | null,
] {
  const [terminal, setTerminal] = useState<SearchableTerminal | null>(null);
  const attach = useCallback((host: HTMLDivElement | null) => {
    if (host === null) return undefined;
    const uninstall = installAdoptedStyles(document);
    const created = new Terminal({
      convertEol: false,
      disableStdin: true,
      cursorBlink: false,
      cursorInactiveStyle: 'none',
      scrollback: 5000,
      fontFamily: "ui-monospace, 'SFMono-Regular', 'DejaVu Sans Mono', Menlo, Consolas, monospace",
      fontSize: 13,
      theme: THEME,
    });
    const fit = new FitAddon();
    const search = new SearchAddon();
    created.loadAddon(fit);
    created.loadAddon(search);
    created.open(host);
    const refit = () => {
      // Hidden or not laid out yet: nothing to fit to.
      if (host.clientWidth > 0 && host.clientHeight > 0) fit.fit();
    };
    refit();
    const observer = new ResizeObserver(refit);
    observer.observe(host);
    setTerminal({
      reset: () => {
        created.reset();
      },
      write: (data) => {
        created.write(data);
      },
      find: (text, direction) =>
        direction === 'next' ? search.findNext(text) : search.findPrevious(text),
    });
    return () => {
      observer.disconnect();
      created.dispose();
      uninstall();
      setTerminal(null);
    };
  }, []);
  return [attach, terminal];
}

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
