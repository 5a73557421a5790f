import { errorMessage } from '../../api/errors';
import { Alert } from '../../components/Alert';
import { useMe } from '../../hooks/useMe';
import { useSession } from '../../hooks/useSession';
import { useTemplates } from '../../hooks/useTemplates';
import { useTitle } from '../../hooks/useTitle';
import page from '../Page.module.css';
import { ImportForm } from './ImportForm';
import { TemplateRow } from './TemplateRow';
import styles from './Templates.module.css';

/**
 * The server templates (imported eggs). Anyone signed in may read the list (a user picks from
 * it nowhere, but it does no harm); admins import eggs and delete templates no server uses.
 */
export function TemplatesPage() {
  useTitle('Templates');
  const templates = useTemplates();
  const me = useMe();
  const { session } = useSession();
  const isAdmin = (me.data?.role ?? session?.role) === 'admin';

  return (
    <>
      <div className={page.pageHeader}>
        <h1>Templates</h1>
        {templates.data !== undefined && (
          <p className={page.muted}>
            {templates.data.length} {templates.data.length === 1 ? 'template' : 'templates'}
          </p>
        )}
      </div>
      {!isAdmin && (
        <Alert tone="info">Only an administrator can import and delete templates.</Alert>
      )}
      <section aria-label="Template list" aria-busy={templates.isPending}>
        {templates.isPending ? (
          <p className={page.placeholder} role="status">
            Loading templates…
          </p>
        ) : templates.isError ? (
          <Alert tone="error">{errorMessage(templates.error)}</Alert>
        ) : templates.data.length === 0 ? (
          <div className={page.placeholder}>
            <p className={page.emptyTitle}>No templates yet</p>
            <p className={page.muted}>
              {isAdmin
                ? 'Import a Pterodactyl or Pelican egg with the form below.'
                : 'An administrator can import them.'}
            </p>
          </div>
        ) : (
          <ul className={styles.list}>
            {templates.data.map((template) => (
              <TemplateRow key={template.id} template={template} canDelete={isAdmin} />
            ))}
          </ul>
        )}
      </section>
      {isAdmin && <ImportForm />}
    </>
  );
}
