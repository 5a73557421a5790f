import { useState } from 'react';
import { Confirm } from '../../components/Confirm';
import { useDeleteTemplate, type TemplateSummary } from '../../hooks/useTemplates';
import styles from './Templates.module.css';

/** One template: name, description, egg format, whether it installs; Delete for admins. */
export function TemplateRow({
  template,
  canDelete,
}: {
  template: TemplateSummary;
  canDelete: boolean;
}) {
  const [confirming, setConfirming] = useState(false);
  const remove = useDeleteTemplate(template.id);
  return (
    <li className={styles.item}>
      <div className={styles.row}>
        <div className={styles.names}>
          <span className={styles.name}>{template.name}</span>
          <span className={styles.id}>{template.id}</span>
        </div>
        <dl className={styles.facts}>
          <div>
            <dt>Format</dt>
            <dd>{template.format}</dd>
          </div>
          <div>
            <dt>Install script</dt>
            <dd>{template.hasInstallScript ? 'Yes' : 'No'}</dd>
          </div>
        </dl>
        {canDelete && !confirming && (
          <button
            type="button"
            className="button secondary"
            aria-label={`Delete ${template.name}`}
            onClick={() => {
              remove.reset();
              setConfirming(true);
            }}
          >
            Delete
          </button>
        )}
      </div>
      {template.description !== '' && <p className={styles.description}>{template.description}</p>}
      {confirming && (
        <Confirm
          label={`Delete ${template.name}?`}
          action="Delete template"
          pendingAction="Deleting…"
          pending={remove.isPending}
          error={remove.isError ? remove.error : null}
          onConfirm={() => {
            remove.mutate();
          }}
          onCancel={() => {
            setConfirming(false);
          }}
        >
          Delete the template <strong>{template.name}</strong>? Servers cannot be made from it
          afterwards; a template that servers were made from cannot be deleted.
        </Confirm>
      )}
    </li>
  );
}
