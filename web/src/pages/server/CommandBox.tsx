import { useId, useMemo, useState, type KeyboardEvent, type SyntheticEvent } from 'react';
import { createCommandHistory } from '../../console/commandHistory';
import styles from './Console.module.css';

/**
 * A console command: Enter or "Send" sends it; ↑ and ↓ walk this server's earlier commands,
 * kept in the browser.
 */
export function CommandBox({
  server,
  onSend,
}: {
  server: string;
  /** Sends; false when it could not (the box then keeps the command). */
  onSend: (command: string) => boolean;
}) {
  const id = useId();
  const history = useMemo(() => createCommandHistory(window.localStorage, server), [server]);
  const [command, setCommand] = useState('');

  const submit = (event: SyntheticEvent) => {
    event.preventDefault();
    const text = command.trim();
    if (text === '') return;
    if (!onSend(text)) return;
    history.push(text);
    setCommand('');
  };

  const walk = (event: KeyboardEvent<HTMLInputElement>) => {
    if (event.key !== 'ArrowUp' && event.key !== 'ArrowDown') return;
    const next = event.key === 'ArrowUp' ? history.up(command) : history.down();
    if (next === null) return;
    event.preventDefault();
    setCommand(next);
  };

  return (
    <form className={styles.commandBox} onSubmit={submit}>
      <label htmlFor={id} className={styles.commandLabel}>
        Command
      </label>
      <div className={styles.commandRow}>
        <input
          id={id}
          className={styles.commandInput}
          name="command"
          autoComplete="off"
          autoCapitalize="none"
          spellCheck={false}
          value={command}
          onChange={(event) => {
            setCommand(event.target.value);
          }}
          onKeyDown={walk}
        />
        <button type="submit" className="button primary">
          Send
        </button>
      </div>
    </form>
  );
}
