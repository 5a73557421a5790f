import { useId, useState, type SyntheticEvent } from 'react';
import { ApiError, errorMessage } from '../../api/errors';
import { Alert } from '../../components/Alert';
import { Field } from '../../components/Field';
import { FormButtons } from '../../components/FormButtons';
import type { WebhookEvent } from '../../hooks/useWebhooks';
import { describeEvent, EVENTS, type WebhookForm as Form } from './events';
import styles from './Webhooks.module.css';

/**
 * A webhook's URL, events, description and whether it is on: to create one, or to edit one. The
 * API's refusal (a URL it may not call, 400 `URL_NOT_ALLOWED`) is shown in an Alert as it says it.
 */
export function WebhookForm({
  label,
  initial,
  action,
  pendingAction,
  pending,
  error,
  onSubmit,
  onCancel,
}: {
  /** The form's accessible name, e.g. "New webhook". */
  label: string;
  initial: Form;
  action: string;
  pendingAction: string;
  pending: boolean;
  error: unknown;
  /** `reset` empties the form (after a create). */
  onSubmit: (form: Form, reset: () => void) => void;
  onCancel?: () => void;
}) {
  const [form, setForm] = useState(initial);
  const [noEvents, setNoEvents] = useState(false);
  const enabledId = useId();
  const details = error instanceof ApiError ? error.details : [];
  const at = (field: string) =>
    details.find((detail) => detail.path.startsWith(`body/${field}`))?.message;

  const toggle = (event: WebhookEvent, on: boolean) => {
    setNoEvents(false);
    setForm((current) => {
      const events = new Set(current.events);
      if (on) events.add(event);
      else events.delete(event);
      return { ...current, events };
    });
  };
  const submit = (event: SyntheticEvent) => {
    event.preventDefault();
    if (form.events.size === 0) {
      setNoEvents(true);
      return;
    }
    onSubmit(form, () => {
      setForm(initial);
    });
  };

  return (
    <form className={styles.form} onSubmit={submit} aria-label={label}>
      <div className={styles.fields}>
        <Field
          label="Payload URL"
          name="webhook-url"
          type="url"
          required
          inputMode="url"
          autoComplete="off"
          spellCheck={false}
          placeholder="https://example.com/panel-events"
          hint="The panel POSTs JSON there, signed with the webhook's secret"
          value={form.url}
          error={at('url')}
          onChange={(event) => {
            setForm({ ...form, url: event.target.value });
          }}
        />
        <Field
          label="Description"
          name="webhook-description"
          maxLength={200}
          autoComplete="off"
          hint="Optional: what receives it"
          value={form.description}
          error={at('description')}
          onChange={(event) => {
            setForm({ ...form, description: event.target.value });
          }}
        />
      </div>
      <fieldset className={styles.events}>
        <legend className={styles.legend}>Events</legend>
        {EVENTS.map((event) => (
          <label key={event} className={styles.box}>
            <input
              type="checkbox"
              aria-label={`Event ${event}`}
              checked={form.events.has(event)}
              onChange={(change) => {
                toggle(event, change.target.checked);
              }}
            />
            <span className={styles.boxText}>
              <code>{event}</code>
              <span className={styles.boxHint}>{describeEvent(event)}</span>
            </span>
          </label>
        ))}
      </fieldset>
      {noEvents && <Alert tone="error">Choose at least one event</Alert>}
      <div className={styles.check}>
        <input
          id={enabledId}
          type="checkbox"
          checked={form.enabled}
          onChange={(event) => {
            setForm({ ...form, enabled: event.target.checked });
          }}
        />
        <label htmlFor={enabledId}>Enabled: send deliveries</label>
      </div>
      {error != null && <Alert tone="error">{errorMessage(error)}</Alert>}
      <FormButtons
        submit={action}
        pendingSubmit={pendingAction}
        pending={pending}
        onCancel={onCancel}
        lockCancel
      />
    </form>
  );
}
