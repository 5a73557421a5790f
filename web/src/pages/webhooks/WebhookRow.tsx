import { useState } from 'react';
import { errorMessage } from '../../api/errors';
import { Alert } from '../../components/Alert';
import { Confirm } from '../../components/Confirm';
import { ShownOnce } from '../../components/ShownOnce';
import {
  useDeleteWebhook,
  useRotateWebhookSecret,
  useTestWebhook,
  useUpdateWebhook,
  type Webhook,
} from '../../hooks/useWebhooks';
import { formatModified } from '../server/files/paths';
import { changesOf, DELIVERY_LABELS, formOf } from './events';
import { Deliveries } from './Deliveries';
import { WebhookForm } from './WebhookForm';
import cards from '../../components/Cards.module.css';
import styles from './Webhooks.module.css';

type Mode = 'idle' | 'edit' | 'rotate' | 'delete';

/** What names a webhook to a person: its description, or its URL. */
export const webhookName = (webhook: Webhook): string =>
  webhook.description === '' ? webhook.url : webhook.description;

/**
 * One webhook: its URL, events, state and last delivery; Edit, Send test, Rotate secret (the new
 * one shown once), Delete, and its delivery history.
 */
export function WebhookRow({ webhook }: { webhook: Webhook }) {
  const [mode, setMode] = useState<Mode>('idle');
  const [showDeliveries, setShowDeliveries] = useState(false);
  const [secret, setSecret] = useState<string | null>(null);
  const [tested, setTested] = useState(false);
  const update = useUpdateWebhook(webhook.id);
  const remove = useDeleteWebhook(webhook.id);
  const rotate = useRotateWebhookSecret(webhook.id);
  const test = useTestWebhook(webhook.id);
  const name = webhookName(webhook);
  const open = (next: Mode) => {
    for (const mutation of [update, remove, rotate, test]) mutation.reset();
    setTested(false);
    setMode(next);
  };
  const last = webhook.lastDelivery;

  return (
    <li className={`${cards.row} ${styles.row}`} aria-label={name}>
      <div className={cards.head}>
        <h3 className={cards.name}>{name}</h3>
        <span className={`${styles.badge} ${webhook.enabled ? styles.on : styles.off}`}>
          {webhook.enabled ? 'Enabled' : 'Disabled'}
        </span>
      </div>
      {webhook.description !== '' && <code className={styles.url}>{webhook.url}</code>}
      <dl className={cards.facts}>
        <div>
          <dt>Events</dt>
          <dd className={styles.eventList}>
            {webhook.events.map((event) => (
              <code key={event}>{event}</code>
            ))}
          </dd>
        </div>
      </dl>
      <dl className={cards.facts}>
        <div>
          <dt>Created</dt>
          <dd>
            <time dateTime={webhook.createdAt}>{formatModified(webhook.createdAt)}</time>
          </dd>
        </div>
        <div>
          <dt>Last delivery</dt>
          <dd>
            {last === null ? (
              'None yet'
            ) : (
              <>
                <span className={`${styles.badge} ${styles[last.status]}`}>
                  {DELIVERY_LABELS[last.status]}
                </span>{' '}
                {last.responseStatus !== null && `HTTP ${last.responseStatus}, `}
                <time dateTime={last.at}>{formatModified(last.at)}</time>
              </>
            )}
          </dd>
        </div>
      </dl>

      {secret !== null && (
        <ShownOnce
          label={`New secret of ${name}`}
          value={secret}
          onDone={() => {
            setSecret(null);
          }}
        >
          Give it to the receiver: it checks each delivery&apos;s X-Panel-Signature with it.
        </ShownOnce>
      )}

      {mode === 'idle' && (
        <div className={cards.buttons}>
          <button
            type="button"
            className="button secondary"
            aria-label={`Edit ${name}`}
            onClick={() => {
              open('edit');
            }}
          >
            Edit
          </button>
          <button
            type="button"
            className="button secondary"
            aria-label={`Send test to ${name}`}
            disabled={test.isPending}
            onClick={() => {
              open('idle');
              test.mutate(undefined, {
                onSuccess: () => {
                  setTested(true);
                  setShowDeliveries(true);
                },
              });
            }}
          >
            {test.isPending ? 'Sending…' : 'Send test'}
          </button>
          <button
            type="button"
            className="button secondary"
            aria-label={`Rotate secret of ${name}`}
            onClick={() => {
              open('rotate');
            }}
          >
            Rotate secret
          </button>
          <button
            type="button"
            className="button secondary"
            aria-expanded={showDeliveries}
            aria-label={`${showDeliveries ? 'Hide' : 'Show'} deliveries of ${name}`}
            onClick={() => {
              setShowDeliveries(!showDeliveries);
            }}
          >
            {showDeliveries ? 'Hide deliveries' : 'Deliveries'}
          </button>
          <button
            type="button"
            className={`button secondary ${styles.dangerText}`}
            aria-label={`Delete ${name}`}
            onClick={() => {
              open('delete');
            }}
          >
            Delete
          </button>
        </div>
      )}
      {test.isError && <Alert tone="error">{errorMessage(test.error)}</Alert>}
      {tested && (
        <Alert tone="success">Test ping queued; its outcome shows in the deliveries</Alert>
      )}

      {mode === 'edit' && (
        <WebhookForm
          label={`Edit ${name}`}
          initial={formOf(webhook)}
          action="Save webhook"
          pendingAction="Saving…"
          pending={update.isPending}
          error={update.error}
          onSubmit={(form) => {
            const changes = changesOf(webhook, form);
            if (Object.keys(changes).length === 0) {
              open('idle');
              return;
            }
            update.mutate(changes, {
              onSuccess: () => {
                setMode('idle');
              },
            });
          }}
          onCancel={() => {
            open('idle');
          }}
        />
      )}
      {mode === 'rotate' && (
        <Confirm
          label={`Rotate the secret of ${name}?`}
          action="Rotate secret"
          pendingAction="Rotating…"
          pending={rotate.isPending}
          error={rotate.error}
          autoFocus
          onConfirm={() => {
            rotate.mutate(undefined, {
              onSuccess: (value) => {
                setSecret(value);
                setMode('idle');
              },
            });
          }}
          onCancel={() => {
            open('idle');
          }}
        >
          Make a new signing secret for <strong>{name}</strong>? The old one stops at once: the
          receiver must be given the new one.
        </Confirm>
      )}
      {mode === 'delete' && (
        <Confirm
          label={`Delete ${name}?`}
          action="Delete webhook"
          pendingAction="Deleting…"
          pending={remove.isPending}
          error={remove.error}
          autoFocus
          onConfirm={() => {
            remove.mutate();
          }}
          onCancel={() => {
            open('idle');
          }}
        >
          Delete the webhook <strong>{name}</strong> and its delivery history? This cannot be
          undone.
        </Confirm>
      )}
      {showDeliveries && <Deliveries id={webhook.id} url={webhook.url} />}
    </li>
  );
}
