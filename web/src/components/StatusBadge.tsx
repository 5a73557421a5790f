import styles from './StatusBadge.module.css';

export type ServerStatus =
  'stopped' | 'installing' | 'starting' | 'running' | 'stopping' | 'crashed' | 'unknown';

const LABELS: Readonly<Record<ServerStatus, string>> = {
  stopped: 'Stopped',
  installing: 'Installing',
  starting: 'Starting',
  running: 'Running',
  stopping: 'Stopping',
  crashed: 'Crashed',
  // Its node does not answer: whether it runs is not known (docs/nodes.md).
  unknown: 'Unknown',
};

/** A server's status as a word and a colour (the word alone carries the meaning). */
export function StatusBadge({ status }: { status: ServerStatus }) {
  return <span className={`${styles.badge} ${styles[status]}`}>{LABELS[status]}</span>;
}
