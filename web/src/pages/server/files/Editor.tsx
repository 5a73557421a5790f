import type { EditorView } from '@codemirror/view';
import { useCallback, useEffect, useRef, useState } from 'react';
import { Link, useBlocker } from 'react-router';
import { ApiError, errorMessage } from '../../../api/errors';
import { Alert } from '../../../components/Alert';
import { useDownload, useFileContent, useSaveFile } from '../../../hooks/useFiles';
import page from '../../Page.module.css';
import { useCan } from '../outlet';
import { Breadcrumbs } from './Breadcrumbs';
import { createEditor } from './codemirror';
import styles from './Editor.module.css';
import files from './Files.module.css';
import { languageFor } from './language';
import { RewrittenKeys } from './RewrittenKeys';
import { baseName, filesUrl, parent } from './paths';

/**
 * A text file in CodeMirror: Save (or Ctrl+S / Cmd+S) writes it; leaving with unsaved changes,
 * by a link, the browser's back or closing the tab, asks first. Above it, the keys of the file
 * the server's template rewrites at every start, if any.
 */
export default function Editor({
  server,
  path,
  canWrite,
}: {
  server: string;
  path: string;
  /** Holds `files.write`: without it the file is shown read-only, with no Save. */
  canWrite: boolean;
}) {
  const canSettings = useCan('settings');
  const content = useFileContent(server, path);
  const download = useDownload(server);
  const name = baseName(path);
  const back = filesUrl(server, parent(path));

  const header = (
    <div className={files.header}>
      <h2 id="editor-title" className={styles.title}>
        {name}
      </h2>
      <div className={files.toolbar}>
        <Link to={back} className="button secondary">
          Back to the folder
        </Link>
        <button
          type="button"
          className="button secondary"
          disabled={download.isPending}
          onClick={() => {
            download.mutate(path);
          }}
        >
          Download
        </button>
      </div>
    </div>
  );

  return (
    <section className={`${page.card} ${files.card}`} aria-labelledby="editor-title">
      {header}
      <Breadcrumbs server={server} path={path} />
      <RewrittenKeys server={server} path={path} canSettings={canSettings} />
      {download.isError && <Alert tone="error">{errorMessage(download.error)}</Alert>}
      {content.isPending ? (
        <p className={page.muted} role="status">
          Loading {name}…
        </p>
      ) : content.isError ? (
        <Alert tone="error">
          {content.error instanceof ApiError &&
          (content.error.status === 413 || content.error.code === 'BINARY_FILE')
            ? `This file cannot be opened in the editor: ${errorMessage(content.error)}`
            : errorMessage(content.error)}
        </Alert>
      ) : (
        <TextEditor
          server={server}
          path={path}
          initial={content.data.content}
          canWrite={canWrite}
        />
      )}
    </section>
  );
}

function TextEditor({
  server,
  path,
  initial,
  canWrite,
}: {
  server: string;
  path: string;
  initial: string;
  canWrite: boolean;
}) {
  const save = useSaveFile(server, path);
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const [saved, setSaved] = useState(initial);
  const [current, setCurrent] = useState(initial);
  const dirty = current !== saved;

  const saveNow = useCallback(() => {
    const text = view.current?.state.doc.toString();
    if (text === undefined || save.isPending) return;
    save.mutate(text, {
      onSuccess: () => {
        setSaved(text);
      },
    });
  }, [save]);
  // The editor is made once; its Ctrl+S calls whatever saveNow is now.
  const saveRef = useRef(saveNow);
  useEffect(() => {
    saveRef.current = saveNow;
  }, [saveNow]);

  useEffect(() => {
    const element = host.current;
    if (element === null) return;
    const root = element.shadowRoot ?? element.attachShadow({ mode: 'open' });
    const parentElement = document.createElement('div');
    parentElement.className = 'editor';
    root.append(parentElement);
    const editor = createEditor({
      parent: parentElement,
      root,
      content: initial,
      language: languageFor(baseName(path)),
      label: `Content of ${baseName(path)}`,
      onChange: setCurrent,
      onSave: () => {
        saveRef.current();
      },
      readOnly: !canWrite,
    });
    view.current = editor;
    return () => {
      editor.destroy();
      parentElement.remove();
      view.current = null;
    };
  }, [initial, path, canWrite]);

  useEffect(() => {
    if (!dirty) return;
    const warn = (event: BeforeUnloadEvent) => {
      event.preventDefault();
    };
    window.addEventListener('beforeunload', warn);
    return () => {
      window.removeEventListener('beforeunload', warn);
    };
  }, [dirty]);

  const blocker = useBlocker(
    ({ currentLocation, nextLocation }) =>
      dirty &&
      (currentLocation.pathname !== nextLocation.pathname ||
        currentLocation.search !== nextLocation.search),
  );

  return (
    <>
      {blocker.state === 'blocked' && (
        <div className={styles.leave} role="alertdialog" aria-labelledby="leave-title">
          <p id="leave-title">
            <strong>{baseName(path)}</strong> has unsaved changes. Leave without saving them?
          </p>
          <div className={files.buttons}>
            <button type="button" className="button secondary" autoFocus onClick={blocker.reset}>
              Stay
            </button>
            <button type="button" className={`button ${files.danger}`} onClick={blocker.proceed}>
              Leave
            </button>
          </div>
        </div>
      )}
      {canWrite ? (
        <div className={styles.bar}>
          <button
            type="button"
            className="button primary"
            disabled={!dirty || save.isPending}
            onClick={saveNow}
          >
            Save
          </button>
          <p className={styles.state} role="status">
            {save.isPending ? 'Saving…' : dirty ? 'Unsaved changes' : 'Saved'}
          </p>
          <p className={styles.keys}>Ctrl+S saves</p>
        </div>
      ) : (
        <p className={page.muted}>
          Read-only: you don&apos;t have permission to change files on this server (
          <code>files.write</code>).
        </p>
      )}
      {save.isError && <Alert tone="error">{errorMessage(save.error)}</Alert>}
      <div ref={host} className={styles.host} />
    </>
  );
}
