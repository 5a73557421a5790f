import { errorMessage } from '../../api/errors';
import { Alert } from '../../components/Alert';
import type { ServerStatus } from '../../components/StatusBadge';
import { useInstall, useSetInstallState } from '../../hooks/useInstall';
import type { ServerConfig } from './settings/settingsForm';
import styles from './ServerPage.module.css';

type Install = ServerConfig['install'];

/** The install state in words: "Not installed", "Install failed (exit code 4)", "Installing…". */
export function installLabel(install: Install): string {
  switch (install.state) {
    case 'installed':
      return 'Installed';
    case 'not-installed':
      return 'Not installed';
    case 'installing':
      return 'Installing…';
    case 'failed':
      return install.exitCode === null
        ? 'Install failed'
        : `Install failed (exit code ${install.exitCode})`;
  }
}

/**
 * Shown while a server is not installed: why it cannot start (and why the install failed),
 * "Install" (its template's script,
 * whose output is in the console) and, for admins, "Mark installed".
 */
export function InstallState({
  server,
  install,
  status,
  isAdmin,
  canInstall,
}: {
  server: string;
  install: Install;
  status: ServerStatus | null;
  isAdmin: boolean;
  /** Holds the `settings` permission, which running the install needs. */
  canInstall: boolean;
}) {
  const run = useInstall(server);
  const mark = useSetInstallState(server);
  const busy = run.isPending || mark.isPending || status === 'installing';
  const idle = status === 'stopped' || status === 'crashed';
  return (
    <section
      className={`${styles.install} ${install.state === 'failed' ? styles.installFailed : ''}`}
      aria-labelledby="install-title"
    >
      <div className={styles.installText}>
        <h2 id="install-title" className={styles.installTitle}>
          {installLabel(install)}
        </h2>
        {install.state === 'failed' && install.reason !== null && (
          <p>Why: {install.reason}. Its last lines are in the console.</p>
        )}
        <p>
          {install.state === 'installing'
            ? 'The install script runs; its output is in the console.'
            : 'The server cannot start until an install succeeds or an admin marks it installed.'}
        </p>
      </div>
      {install.state !== 'installing' && (canInstall || isAdmin) && (
        <div className={styles.installActions}>
          <button
            type="button"
            className="button primary"
            disabled={busy || !idle}
            onClick={() => {
              mark.reset();
              run.mutate();
            }}
          >
            {run.isPending ? 'Installing…' : 'Install'}
          </button>
          {isAdmin && (
            <button
              type="button"
              className="button secondary"
              disabled={busy}
              onClick={() => {
                run.reset();
                mark.mutate('installed');
              }}
            >
              Mark installed
            </button>
          )}
        </div>
      )}
      {run.isError && <Alert tone="error">{errorMessage(run.error)}</Alert>}
      {mark.isError && <Alert tone="error">{errorMessage(mark.error)}</Alert>}
    </section>
  );
}
