import { useId, useState, type SyntheticEvent } from 'react';
import { errorMessage } from '../../api/errors';
import { Alert } from '../../components/Alert';
import { useImportTemplate } from '../../hooks/useTemplates';
import page from '../Page.module.css';
import styles from './Templates.module.css';

/**
 * Admins only: imports an egg, chosen as a file or pasted. A chosen file's text fills the text
 * area, so what is sent is always what is shown (and can be mended after a refusal).
 */
export function ImportForm() {
  const id = useId();
  const importing = useImportTemplate();
  const [text, setText] = useState('');
  const [fileError, setFileError] = useState<string | null>(null);

  const choose = (file: File | undefined) => {
    setFileError(null);
    importing.reset();
    if (file === undefined) return;
    file.text().then(setText, () => {
      setFileError(`${file.name} could not be read`);
    });
  };
  const submit = (event: SyntheticEvent) => {
    event.preventDefault();
    importing.mutate(text, {
      onSuccess: () => {
        setText('');
      },
    });
  };
  const imported = importing.data;

  return (
    <section className={page.card} aria-labelledby="import-title">
      <h2 id="import-title">Import an egg</h2>
      <form className={styles.form} onSubmit={submit}>
        <div className={styles.field}>
          <label className={styles.label} htmlFor={`${id}-file`}>
            Egg file
          </label>
          <input
            id={`${id}-file`}
            type="file"
            className={styles.file}
            accept=".json,.yaml,.yml,application/json,application/yaml"
            aria-describedby={`${id}-file-hint`}
            onChange={(event) => {
              choose(event.target.files?.[0]);
            }}
          />
          <p id={`${id}-file-hint`} className={styles.hint}>
            A Pterodactyl (PTDL_v1, PTDL_v2) or Pelican (PLCN) egg, JSON or YAML; its text shows
            below
          </p>
          {fileError !== null && <Alert tone="error">{fileError}</Alert>}
        </div>
        <div className={styles.field}>
          <label className={styles.label} htmlFor={`${id}-text`}>
            Egg text
          </label>
          <textarea
            id={`${id}-text`}
            className={styles.textarea}
            aria-describedby={`${id}-text-hint`}
            spellCheck={false}
            autoCapitalize="none"
            rows={8}
            value={text}
            onChange={(event) => {
              importing.reset();
              setText(event.target.value);
            }}
          />
          <p id={`${id}-text-hint`} className={styles.hint}>
            Or paste the egg here
          </p>
        </div>
        {importing.isError && <Alert tone="error">{errorMessage(importing.error)}</Alert>}
        {imported !== undefined && (
          <div className={styles.result}>
            <Alert tone="success">Imported {imported.name}</Alert>
            {imported.warnings.length > 0 && (
              <section aria-labelledby={`${id}-warnings`} className={styles.warnings}>
                <h3 id={`${id}-warnings`}>Import warnings</h3>
                <ul>
                  {imported.warnings.map((warning) => (
                    <li key={warning}>{warning}</li>
                  ))}
                </ul>
              </section>
            )}
          </div>
        )}
        <div>
          <button
            type="submit"
            className="button primary"
            disabled={text.trim() === '' || importing.isPending}
          >
            {importing.isPending ? 'Importing…' : 'Import'}
          </button>
        </div>
      </form>
    </section>
  );
}
