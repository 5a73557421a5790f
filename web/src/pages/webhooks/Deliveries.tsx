import { useState } from 'react';
import { errorMessage } from '../../api/errors';
import { Alert } from '../../components/Alert';
import { Pager } from '../../components/Pager';
import { useDeliveries } from '../../hooks/useWebhooks';
import page from '../Page.module.css';
import { formatModified } from '../server/files/paths';
import { DELIVERY_LABELS } from './events';
import cards from '../../components/Cards.module.css';
import styles from './Webhooks.module.css';

const SIZE = 10;

/** A webhook's deliveries, newest first, a page at a time; followed while one is pending. */
export function Deliveries({ id, url }: { id: number; url: string }) {
  const [at, setAt] = useState(1);
  const deliveries = useDeliveries(id, { limit: SIZE, offset: (at - 1) * SIZE });
  return (
    <div className={styles.deliveries} aria-busy={deliveries.isFetching}>
      <h4 className={styles.subtitle}>Deliveries</h4>
      {deliveries.isPending ? (
        <p className={page.placeholder} role="status">
          Loading deliveries…
        </p>
      ) : deliveries.isError ? (
        <Alert tone="error">{errorMessage(deliveries.error)}</Alert>
      ) : deliveries.data.deliveries.length === 0 ? (
        <div className={page.placeholder}>
          <p className={page.emptyTitle}>No deliveries yet</p>
          <p>Send a test, or wait for one of its events.</p>
        </div>
      ) : (
        <ul className={styles.deliveryList} aria-label={`Deliveries to ${url}`}>
          {deliveries.data.deliveries.map((delivery) => (
            <li key={delivery.id} className={styles.delivery}>
              <div className={styles.head}>
                <code>{delivery.event}</code>
                <span className={`${styles.badge} ${styles[delivery.status]}`}>
                  {DELIVERY_LABELS[delivery.status]}
                </span>
                <span className={page.muted}>#{delivery.id}</span>
              </div>
              <dl className={cards.facts}>
                <div>
                  <dt>Queued</dt>
                  <dd>
                    <time dateTime={delivery.createdAt}>{formatModified(delivery.createdAt)}</time>
                  </dd>
                </div>
                <div>
                  <dt>Attempts</dt>
                  <dd>{delivery.attempts}</dd>
                </div>
                <div>
                  <dt>Response</dt>
                  <dd>{delivery.responseStatus ?? '—'}</dd>
                </div>
                <div>
                  <dt>Last attempt</dt>
                  <dd>
                    {delivery.lastAttemptAt === null ? (
                      '—'
                    ) : (
                      <time dateTime={delivery.lastAttemptAt}>
                        {formatModified(delivery.lastAttemptAt)}
                      </time>
                    )}
                  </dd>
                </div>
                {delivery.nextAttemptAt !== null && (
                  <div>
                    <dt>Next attempt</dt>
                    <dd>
                      <time dateTime={delivery.nextAttemptAt}>
                        {formatModified(delivery.nextAttemptAt)}
                      </time>
                    </dd>
                  </div>
                )}
              </dl>
              {delivery.error !== null && <p className={styles.problem}>Error: {delivery.error}</p>}
            </li>
          ))}
        </ul>
      )}
      {deliveries.data !== undefined && (
        <Pager
          label={`Deliveries pages of ${url}`}
          page={at}
          total={deliveries.data.total}
          size={SIZE}
          onPage={setAt}
        />
      )}
    </div>
  );
}
