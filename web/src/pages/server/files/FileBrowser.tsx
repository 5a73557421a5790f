import { useId, useState, type DragEvent } from 'react';
import { errorMessage } from '../../../api/errors';
import { Alert } from '../../../components/Alert';
import { useFolder } from '../../../hooks/useFiles';
import page from '../../Page.module.css';
import { Breadcrumbs } from './Breadcrumbs';
import { BulkActions } from './BulkActions';
import { EntryRow } from './EntryRow';
import styles from './Files.module.css';
import { NewEntryForm } from './NewEntryForm';
import { SftpLine } from './SftpLine';
import { Uploads } from './Uploads';
import { useUploads } from '../../../hooks/useUploads';

const hasFiles = (event: DragEvent) => event.dataTransfer.types.includes('Files');

/**
 * A folder of the server: its entries, making files and folders, uploads by button or drop; only
 * the entries and downloads without `files.write`.
 */
export function FileBrowser({
  server,
  folder,
  canWrite,
}: {
  server: string;
  folder: string;
  canWrite: boolean;
}) {
  const listing = useFolder(server, folder);
  const uploads = useUploads(server);
  const [creating, setCreating] = useState<'file' | 'folder' | null>(null);
  const [dragging, setDragging] = useState(false);
  // Paths, not entries: a refetch keeps what is still there chosen, and drops what went.
  const [chosen, setChosen] = useState<ReadonlySet<string>>(new Set());
  const selected = (listing.data ?? []).filter((entry) => chosen.has(entry.path));
  const inputId = useId();

  const onDragOver = (event: DragEvent) => {
    if (!canWrite || !hasFiles(event)) return;
    event.preventDefault();
    event.dataTransfer.dropEffect = 'copy';
    setDragging(true);
  };
  const onDrop = (event: DragEvent) => {
    if (!canWrite || !hasFiles(event)) return;
    event.preventDefault();
    setDragging(false);
    uploads.upload(event.dataTransfer.files, folder);
  };

  return (
    <section className={`${page.card} ${styles.card}`} aria-labelledby="files-title">
      <div className={styles.header}>
        <h2 id="files-title">Files</h2>
        {canWrite ? (
          <div className={styles.toolbar}>
            <button
              type="button"
              className="button secondary"
              onClick={() => {
                setCreating('file');
              }}
            >
              New file
            </button>
            <button
              type="button"
              className="button secondary"
              onClick={() => {
                setCreating('folder');
              }}
            >
              New folder
            </button>
            <input
              id={inputId}
              type="file"
              multiple
              className={styles.fileInput}
              onChange={(event) => {
                if (event.target.files !== null) uploads.upload(event.target.files, folder);
                event.target.value = '';
              }}
            />
            <label htmlFor={inputId} className="button primary">
              Upload
            </label>
          </div>
        ) : (
          <p className={page.muted}>Read-only: you don&apos;t have permission to change files.</p>
        )}
      </div>
      <SftpLine server={server} />
      <Breadcrumbs server={server} path={folder} />
      {creating !== null && (
        <NewEntryForm
          key={creating}
          server={server}
          folder={folder}
          type={creating}
          onDone={() => {
            setCreating(null);
          }}
        />
      )}
      <Uploads items={uploads.items} onCancel={uploads.cancel} onClear={uploads.clearFinished} />
      <div
        className={`${styles.dropZone} ${dragging ? styles.dragging : ''}`}
        data-testid="drop-zone"
        onDragOver={onDragOver}
        onDragEnter={onDragOver}
        onDragLeave={(event) => {
          if (!event.currentTarget.contains(event.relatedTarget as Node | null)) setDragging(false);
        }}
        onDrop={onDrop}
      >
        {dragging && (
          <p className={styles.dropHint} aria-hidden="true">
            Drop to upload into /{folder}
          </p>
        )}
        {canWrite && listing.data !== undefined && (
          <BulkActions
            server={server}
            folder={folder}
            listed={listing.data}
            selected={selected}
            onSelect={(paths) => {
              setChosen(new Set(paths));
            }}
          />
        )}
        {listing.isPending ? (
          <p className={page.placeholder} role="status">
            Loading files…
          </p>
        ) : listing.isError ? (
          <Alert tone="error">{errorMessage(listing.error)}</Alert>
        ) : listing.data.length === 0 ? (
          <div className={page.placeholder}>
            <p className={page.emptyTitle}>This folder is empty</p>
            {canWrite && (
              <p className={page.muted}>
                Upload files, drop them here, or create a file or folder.
              </p>
            )}
          </div>
        ) : (
          <ul className={styles.list} aria-label={`Content of /${folder}`}>
            {listing.data.map((entry) => (
              <EntryRow
                key={entry.path}
                server={server}
                entry={entry}
                canWrite={canWrite}
                selected={chosen.has(entry.path)}
                onSelect={(on) => {
                  setChosen((current) => {
                    const next = new Set(current);
                    if (on) next.add(entry.path);
                    else next.delete(entry.path);
                    return next;
                  });
                }}
              />
            ))}
          </ul>
        )}
        {canWrite && (
          <p className={styles.hint}>You can also drop files onto the list to upload them here.</p>
        )}
      </div>
    </section>
  );
}
