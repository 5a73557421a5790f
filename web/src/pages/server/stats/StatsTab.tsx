import { useServerOutlet } from '../outlet';
import page from '../../Page.module.css';

/** The server's Stats tab (being built: issue 13). */
export default function StatsTab() {
  const { name } = useServerOutlet();
  return (
    <section className={page.card} aria-labelledby="tab-title">
      <h2 id="tab-title">Stats</h2>
      <p className={page.muted}>Not built yet for {name}.</p>
    </section>
  );
}
