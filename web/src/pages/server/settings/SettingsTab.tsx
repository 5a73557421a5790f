import { useServerOutlet } from '../outlet';
import page from '../../Page.module.css';

/** The server's Settings tab (being built: issue 13). */
export default function SettingsTab() {
  const { name } = useServerOutlet();
  return (
    <section className={page.card} aria-labelledby="tab-title">
      <h2 id="tab-title">Settings</h2>
      <p className={page.muted}>Not built yet for {name}.</p>
    </section>
  );
}
