import { useState, type SyntheticEvent } from 'react';
import { Link } from 'react-router';
import { errorMessage } from '../../../api/errors';
import { Alert } from '../../../components/Alert';
import { Field } from '../../../components/Field';
import {
  useCompress,
  useDecompress,
  useDeleteEntry,
  useDownload,
  useMoveEntry,
  useRenameEntry,
  type FileEntry,
} from '../../../hooks/useFiles';
import { formatBytes } from '../format';
import { filesUrl, formatModified, join, nameProblem, normalise, parent } from './paths';
import { Confirm } from '../../../components/Confirm';
import { FormButtons } from '../../../components/FormButtons';
import styles from './Files.module.css';

type Mode = 'idle' | 'rename' | 'move' | 'delete';

/** The names the file manager offers to extract; the API tells the format by the content. */
const ARCHIVE = /\.(zip|tar|tar\.gz|tgz)$/i;

/**
 * One file or folder: its checkbox for the bulk actions, its name (a link), size and date, and
 * what can be done with it.
 */
export function EntryRow({
  server,
  entry,
  canWrite,
  selected,
  onSelect,
}: {
  server: string;
  entry: FileEntry;
  /** Holds `files.write`: without it only opening and downloading are offered. */
  canWrite: boolean;
  selected: boolean;
  onSelect: (selected: boolean) => void;
}) {
  const [mode, setMode] = useState<Mode>('idle');
  const rename = useRenameEntry(server);
  const move = useMoveEntry(server);
  const remove = useDeleteEntry(server);
  const download = useDownload(server);
  const compress = useCompress(server);
  const decompress = useDecompress(server);
  const [done, setDone] = useState<string | null>(null);
  const [name, setName] = useState(entry.name);
  const [destination, setDestination] = useState(parent(entry.path));
  const [problem, setProblem] = useState<string | null>(null);
  const isFolder = entry.type === 'folder';

  const open = (next: Mode) => {
    for (const mutation of [rename, move, remove, compress, decompress]) mutation.reset();
    setDone(null);
    setProblem(null);
    setName(entry.name);
    setDestination(parent(entry.path));
    setMode(next);
  };
  const submitRename = (event: SyntheticEvent) => {
    event.preventDefault();
    const wrong = nameProblem(name);
    setProblem(wrong);
    if (wrong === null) rename.mutate({ path: entry.path, name: name.trim() });
  };
  const submitMove = (event: SyntheticEvent) => {
    event.preventDefault();
    // The root is "/", which the API reads as the server directory.
    move.mutate({ source: entry.path, destination: `/${normalise(destination)}` });
  };
  const folder = parent(entry.path);
  const archiveName = `${entry.name}.zip`;
  const runCompress = () => {
    open('idle');
    compress.mutate(
      { paths: [entry.path], destination: join(folder, archiveName), format: 'zip' },
      {
        onSuccess: () => {
          setDone(`Compressed into ${archiveName}`);
        },
      },
    );
  };
  const runExtract = () => {
    open('idle');
    // The root is "/", which the API reads as the server directory.
    decompress.mutate(
      { path: entry.path, destination: `/${folder}` },
      {
        onSuccess: (entries) => {
          setDone(
            `Extracted ${entries.length} ${entries.length === 1 ? 'entry' : 'entries'} from ${entry.name}`,
          );
        },
      },
    );
  };
  const failed =
    rename.error ??
    move.error ??
    remove.error ??
    download.error ??
    compress.error ??
    decompress.error;

  return (
    <li className={styles.row}>
      <div className={styles.entry}>
        {canWrite ? (
          <input
            type="checkbox"
            className={styles.select}
            aria-label={`Select ${entry.name}`}
            checked={selected}
            onChange={(event) => {
              onSelect(event.target.checked);
            }}
          />
        ) : (
          <span className={styles.select} aria-hidden="true" />
        )}
        <span className={styles.kind} aria-hidden="true">
          {isFolder ? '▸' : entry.type === 'symlink' ? '↪' : '·'}
        </span>
        <div className={styles.entryText}>
          <Link className={styles.entryName} to={filesUrl(server, entry.path, !isFolder)}>
            {entry.name}
            {isFolder ? '/' : ''}
          </Link>
          <span className={styles.meta}>
            {isFolder ? 'Folder' : formatBytes(entry.size)} ·{' '}
            <time dateTime={entry.modified}>{formatModified(entry.modified)}</time>
          </span>
        </div>
        {mode === 'idle' && (
          <div className={styles.actions}>
            {!isFolder && (
              <button
                type="button"
                className={styles.action}
                disabled={download.isPending}
                onClick={() => {
                  download.mutate(entry.path);
                }}
              >
                Download
              </button>
            )}
            {canWrite && !isFolder && ARCHIVE.test(entry.name) && (
              <button
                type="button"
                className={styles.action}
                aria-label={`Extract ${entry.name}`}
                disabled={decompress.isPending}
                onClick={runExtract}
              >
                {decompress.isPending ? 'Extracting…' : 'Extract'}
              </button>
            )}
            {canWrite && (
              <>
                <button
                  type="button"
                  className={styles.action}
                  aria-label={`Compress ${entry.name}`}
                  disabled={compress.isPending}
                  onClick={runCompress}
                >
                  {compress.isPending ? 'Compressing…' : 'Compress'}
                </button>
                <button
                  type="button"
                  className={styles.action}
                  onClick={() => {
                    open('rename');
                  }}
                >
                  Rename
                </button>
                <button
                  type="button"
                  className={styles.action}
                  onClick={() => {
                    open('move');
                  }}
                >
                  Move
                </button>
                <button
                  type="button"
                  className={`${styles.action} ${styles.dangerText}`}
                  onClick={() => {
                    open('delete');
                  }}
                >
                  Delete
                </button>
              </>
            )}
          </div>
        )}
      </div>

      {mode === 'rename' && (
        <form className={styles.inlineForm} onSubmit={submitRename}>
          <Field
            label={`New name for ${entry.name}`}
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
          <FormButtons
            submit="Rename"
            pending={rename.isPending}
            onCancel={() => {
              open('idle');
            }}
          />
        </form>
      )}
      {mode === 'move' && (
        <form className={styles.inlineForm} onSubmit={submitMove}>
          <Field
            label={`Move ${entry.name} to`}
            name="destination"
            autoFocus
            autoCapitalize="none"
            spellCheck={false}
            hint="A folder to move it into (empty for the top folder), or a new path"
            value={destination}
            onChange={(event) => {
              setDestination(event.target.value);
            }}
          />
          <FormButtons
            submit="Move"
            pending={move.isPending}
            onCancel={() => {
              open('idle');
            }}
          />
        </form>
      )}
      {mode === 'delete' && (
        <Confirm
          label={`Delete ${entry.name}?`}
          action="Delete"
          pending={remove.isPending}
          autoFocus
          onConfirm={() => {
            remove.mutate(entry.path);
          }}
          onCancel={() => {
            open('idle');
          }}
        >
          Delete <strong>{entry.name}</strong>
          {isFolder ? ' and everything in it' : ''}? This cannot be undone.
        </Confirm>
      )}
      {failed !== null && <Alert tone="error">{errorMessage(failed)}</Alert>}
      {done !== null && <Alert tone="success">{done}</Alert>}
    </li>
  );
}
