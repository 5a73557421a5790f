import { useId, useState } from 'react';
import { Alert } from '../../components/Alert';
import { TextAreaField } from '../../components/Field';
import { PEM_MAX_CHARS } from './model';
import styles from './Nodes.module.css';

/**
 * A certificate or key, pasted or read from a chosen file: the file's text fills the text area,
 * so what is sent is always what is shown (and can be mended after a refusal). The text never
 * leaves the page but in the request that adds the node.
 */
export function PemField({
  label,
  fileLabel,
  hint,
  placeholder,
  value,
  error,
  onChange,
}: {
  /** The text area's label, e.g. "CA certificate". */
  label: string;
  /** The file chooser's label, e.g. "Or choose ca.pem". */
  fileLabel: string;
  hint: string;
  placeholder: string;
  value: string;
  error: string | undefined;
  onChange: (text: string) => void;
}) {
  const fileId = useId();
  const [fileError, setFileError] = useState<string | null>(null);

  const choose = (file: File | undefined) => {
    setFileError(null);
    if (file === undefined) return;
    // A PEM text is a few kilobytes; a big file is not one, and would only slow the page.
    if (file.size > PEM_MAX_CHARS * 4) {
      setFileError(`${file.name} is too big for a certificate or key`);
      return;
    }
    file.text().then(onChange, () => {
      setFileError(`${file.name} could not be read`);
    });
  };

  return (
    <div className={styles.pem}>
      <TextAreaField
        label={label}
        hint={hint}
        error={error}
        rows={4}
        spellCheck={false}
        autoCapitalize="none"
        autoComplete="off"
        placeholder={placeholder}
        value={value}
        onChange={(event) => {
          onChange(event.target.value);
        }}
      />
      <div className={styles.file}>
        <label htmlFor={fileId}>{fileLabel}</label>
        <input
          id={fileId}
          type="file"
          onChange={(event) => {
            choose(event.target.files?.[0]);
            // The same file chosen again (after an edit) is read again.
            event.target.value = '';
          }}
        />
      </div>
      {fileError !== null && <Alert tone="error">{fileError}</Alert>}
    </div>
  );
}
