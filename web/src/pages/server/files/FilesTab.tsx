import { lazy, Suspense } from 'react';
import { useParams, useSearchParams } from 'react-router';
import page from '../../Page.module.css';
import { useServerOutlet } from '../outlet';
import { FileBrowser } from './FileBrowser';
import { normalise } from './paths';

// CodeMirror is fetched only when a file is opened.
const Editor = lazy(() => import('./Editor'));

/**
 * The server's Files tab. The path after `/files/` is the folder shown, or, with `?edit`, the
 * file open in the editor: a reload or a pasted link opens the same place.
 */
export default function FilesTab() {
  const { name, permissions } = useServerOutlet();
  const canWrite = permissions?.has('files.write') === true;
  const path = normalise(useParams()['*'] ?? '');
  const [search] = useSearchParams();
  if (search.has('edit') && path !== '') {
    return (
      <Suspense
        fallback={
          <p className={page.muted} role="status">
            Loading the editor…
          </p>
        }
      >
        <Editor key={path} server={name} path={path} canWrite={canWrite} />
      </Suspense>
    );
  }
  return <FileBrowser key={path} server={name} folder={path} canWrite={canWrite} />;
}
