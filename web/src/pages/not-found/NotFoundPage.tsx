import { Link } from 'react-router';
import { useTitle } from '../../hooks/useTitle';
import styles from '../Page.module.css';

export function NotFoundPage() {
  useTitle('Page not found');
  return (
    <section className={styles.card} aria-labelledby="not-found-title">
      <h1 id="not-found-title">Page not found</h1>
      <p>
        Nothing lives at this address. <Link to="/servers">Go to the servers</Link>.
      </p>
    </section>
  );
}
