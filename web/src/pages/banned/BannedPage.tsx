import { useTitle } from '../../hooks/useTitle';
import styles from '../Page.module.css';

/** All a banned account sees: the API answers it 403 everywhere but `/api/auth/me`. */
export function BannedPage() {
  useTitle('Account banned');
  return (
    <section className={styles.card} aria-labelledby="banned-title">
      <h1 id="banned-title">This account is banned</h1>
      <p>
        An administrator has banned this account, so the panel does nothing for it. If you think
        this is a mistake, ask an administrator of this panel. You can sign out above.
      </p>
    </section>
  );
}
