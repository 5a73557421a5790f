import { lazy, Suspense } from 'react';
import { useServerConfig } from '../../hooks/useServer';
import { useTemplate } from '../../hooks/useTemplates';
import page from '../Page.module.css';
import { Allowed } from './Allowed';
import { useServerOutlet } from './outlet';

// The terminal's code (xterm.js) is fetched only when a server's console opens.
const Console = lazy(() => import('./Console'));

/**
 * The server's Console tab: the live console and the command box, unless the server's template
 * says its game reads no console input.
 */
export default function ConsoleTab() {
  const { name, onStatus, permissions } = useServerOutlet();
  const templateId = useServerConfig(name).data?.template ?? null;
  const template = useTemplate(templateId).data;
  return (
    <Allowed permission="console.read" title="Console" what="read the console">
      <Suspense
        fallback={
          <div className={page.card}>
            <h2>Console</h2>
            <p className={page.muted} role="status">
              Loading the console…
            </p>
          </div>
        }
      >
        <Console
          server={name}
          onStatus={onStatus}
          canWrite={permissions?.has('console.write') === true}
          canAcceptEula={permissions?.has('files.write') === true && permissions.has('power')}
          noInput={template?.readsConsoleInput === false ? template.name : null}
        />
      </Suspense>
    </Allowed>
  );
}
