import { useState, type SyntheticEvent } from 'react';
import { errorMessage } from '../../../api/errors';
import { Alert } from '../../../components/Alert';
import { Field } from '../../../components/Field';
import { FormButtons } from '../../../components/FormButtons';
import { useCreateEntry } from '../../../hooks/useFiles';
import { nameProblem } from './paths';
import styles from './Files.module.css';

/** "New file" or "New folder": a name, made in the folder shown. */
export function NewEntryForm({
  server,
  folder,
  type,
  onDone,
}: {
  server: string;
  folder: string;
  type: 'file' | 'folder';
  onDone: () => void;
}) {
  const create = useCreateEntry(server);
  const [name, setName] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const submit = (event: SyntheticEvent) => {
    event.preventDefault();
    const wrong = nameProblem(name);
    setProblem(wrong);
    if (wrong !== null) return;
    create.mutate({ type, name: name.trim(), path: folder }, { onSuccess: onDone });
  };
  const label = type === 'file' ? 'File name' : 'Folder name';
  return (
    <form className={styles.inlineForm} onSubmit={submit}>
      <Field
        label={label}
        name="name"
        autoFocus
        autoCapitalize="none"
        spellCheck={false}
        value={name}
        onChange={(event) => {
          setName(event.target.value);
        }}
      />
      {problem !== null && <Alert tone="error">{problem}</Alert>}
      {create.isError && <Alert tone="error">{errorMessage(create.error)}</Alert>}
      <FormButtons
        submit={type === 'file' ? 'Create file' : 'Create folder'}
        pending={create.isPending}
        onCancel={onDone}
      />
    </form>
  );
}
