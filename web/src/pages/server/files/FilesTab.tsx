import { useServerOutlet } from '../outlet';
import page from '../../Page.module.css';

/** The server's Files tab (being built: issue 13). */
export default function FilesTab() {
  const { name } = useServerOutlet();
  return (
    <section className={page.card} aria-labelledby="tab-title">
      <h2 id="tab-title">Files</h2>
      <p className={page.muted}>Not built yet for {name}.</p>
    </section>
  );
}
