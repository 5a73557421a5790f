import { Link } from 'react-router';
import { useRewrites, type RewrittenFile } from '../../../hooks/useRewrites';
import styles from './Editor.module.css';

type Key = RewrittenFile['keys'][number];

/** "Server name (SERVER_NAME)", "a hidden variable", "the server's primary port (SERVER_PORT)". */
function sourceText(source: Key['from'][number]): string {
  if (source.hidden || source.envVariable === null || source.name === source.envVariable)
    return source.name;
  return `${source.name} (${source.envVariable})`;
}

/** One key: what it is, when it is replaced, and from what. */
function KeyLine({ parser, rewritten }: { parser: string; rewritten: Key }) {
  const what = parser === 'file' ? 'lines starting with ' : '';
  return (
    <li>
      {what}
      <code>{rewritten.match}</code>
      {rewritten.ifValue !== null && (
        <>
          {' '}
          when it is <code>{rewritten.ifValue}</code>
        </>
      )}
      {rewritten.from.length === 0 ? (
        <>
          : always <code>{rewritten.value}</code>
        </>
      ) : (
        <>: from {rewritten.from.map(sourceText).join(', ')}</>
      )}
    </li>
  );
}

/**
 * Above the editor: the keys of the open file that the server's template rewrites before every
 * start (`GET /api/servers/{server}/config-files`), so that nobody edits them in vain. Nothing
 * when there are none, or when they cannot be read (the editor works without).
 */
export function RewrittenKeys({
  server,
  path,
  canSettings,
}: {
  server: string;
  path: string;
  /** Holds `settings`: the note then links to the variables. */
  canSettings: boolean;
}) {
  const rewrites = useRewrites(server, path);
  const files = (rewrites.data ?? []).filter((file) => file.keys.length > 0);
  if (files.length === 0) return null;
  return (
    <section className={styles.rewrites} aria-labelledby="rewrites-title">
      <h3 id="rewrites-title" className={styles.rewritesTitle}>
        The template rewrites these keys before every start
      </h3>
      <p>A change to them here is undone at the next start:</p>
      <ul>
        {files.flatMap((file) =>
          file.keys.map((rewritten, index) => (
            <KeyLine key={`${file.file}-${index}`} parser={file.parser} rewritten={rewritten} />
          )),
        )}
      </ul>
      <p>
        {canSettings ? (
          <>
            Change the variables in the <Link to={`/servers/${server}/settings`}>Settings</Link> tab
            instead.
          </>
        ) : (
          'Someone with the settings permission can change the variables instead.'
        )}
      </p>
    </section>
  );
}
