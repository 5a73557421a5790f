import { useState } from 'react';
import { errorMessage } from '../../api/errors';
import { Alert } from '../../components/Alert';
import { ShownOnce } from '../../components/ShownOnce';
import { useMe } from '../../hooks/useMe';
import { useSession } from '../../hooks/useSession';
import { useTitle } from '../../hooks/useTitle';
import { useCreateWebhook, useWebhooks } from '../../hooks/useWebhooks';
import page from '../Page.module.css';
import { bodyOf, EMPTY_FORM } from './events';
import { WebhookForm } from './WebhookForm';
import { WebhookRow, webhookName } from './WebhookRow';
import cards from '../../components/Cards.module.css';

/**
 * The panel's webhooks (admins): each URL is sent the events it follows as signed JSON. A new
 * webhook's secret, and a rotated one, are shown once.
 */
export function WebhooksPage() {
  useTitle('Webhooks');
  const webhooks = useWebhooks();
  const create = useCreateWebhook();
  const me = useMe();
  const { session } = useSession();
  const isAdmin = (me.data?.role ?? session?.role) === 'admin';
  const [created, setCreated] = useState<{ name: string; secret: string } | null>(null);

  return (
    <>
      <div className={page.pageHeader}>
        <h1>Webhooks</h1>
        {webhooks.data !== undefined && (
          <p className={page.muted}>
            {webhooks.data.length} {webhooks.data.length === 1 ? 'webhook' : 'webhooks'}
          </p>
        )}
      </div>
      {!isAdmin && <Alert tone="info">Only an administrator can manage webhooks.</Alert>}
      <p className={page.muted}>
        Each delivery is a POST of JSON with <code>X-Panel-Event</code> and{' '}
        <code>X-Panel-Signature: sha256=…</code>, the HMAC-SHA256 of{' '}
        <code>&lt;X-Panel-Timestamp&gt;.&lt;body&gt;</code> under the webhook&apos;s secret. A
        delivery not answered 2xx is tried again, up to 6 times.
      </p>
      {created !== null && (
        <ShownOnce
          label={`Secret of ${created.name}`}
          value={created.secret}
          onDone={() => {
            setCreated(null);
          }}
        >
          Give it to the receiver to check each delivery&apos;s signature; rotate it if it is lost.
        </ShownOnce>
      )}
      <section aria-label="Webhook list" aria-busy={webhooks.isFetching}>
        {webhooks.isPending ? (
          <p className={page.placeholder} role="status">
            Loading webhooks…
          </p>
        ) : webhooks.isError ? (
          <Alert tone="error">{errorMessage(webhooks.error)}</Alert>
        ) : webhooks.data.length === 0 ? (
          <div className={page.placeholder}>
            <p className={page.emptyTitle}>No webhooks yet</p>
            <p>Add one below to tell another service when servers crash or tickets arrive.</p>
          </div>
        ) : (
          <ul className={cards.list}>
            {webhooks.data.map((webhook) => (
              <WebhookRow key={webhook.id} webhook={webhook} />
            ))}
          </ul>
        )}
      </section>
      {isAdmin && (
        <section className={page.card} aria-labelledby="new-webhook-title">
          <h2 id="new-webhook-title">New webhook</h2>
          <WebhookForm
            label="New webhook"
            initial={EMPTY_FORM}
            action="Create webhook"
            pendingAction="Creating…"
            pending={create.isPending}
            error={create.error}
            onSubmit={(form, reset) => {
              create.mutate(bodyOf(form), {
                onSuccess: ({ webhook, secret }) => {
                  reset();
                  setCreated({ name: webhookName(webhook), secret });
                },
              });
            }}
          />
        </section>
      )}
    </>
  );
}
