import { useId, useState, type SyntheticEvent } from 'react';
import { ApiError, errorMessage } from '../../api/errors';
import { Alert } from '../../components/Alert';
import cards from '../../components/Cards.module.css';
import { Confirm } from '../../components/Confirm';
import { Field } from '../../components/Field';
import { FormButtons } from '../../components/FormButtons';
import {
  useAddRegistry,
  useDeleteRegistry,
  useRegistries,
  useRegistryRule,
  useUpdateRegistry,
  type Registry,
} from '../../hooks/useRegistries';
import { formatModified } from '../server/files/paths';
import page from '../Page.module.css';
import styles from './Settings.module.css';

/** What the API said about one field (`body/<field>`), if anything. */
const fieldError = (error: unknown, field: string): string | undefined =>
  error instanceof ApiError
    ? error.details.find((detail) => detail.path === `body/${field}`)?.message
    : undefined;

/** The API's refusal when no field carries it (the field's own line shows the rest). */
const generalError = (error: unknown): unknown =>
  error instanceof ApiError && error.details.length > 0 ? null : error;

/**
 * Container registries (docs/templates.md, "Images"): whether images may be pulled only from the
 * listed ones, the list, each registry's credentials (never shown again once saved), and a form
 * to list another.
 */
export function Registries() {
  const registries = useRegistries();
  const rule = useRegistryRule();
  const [asked, setAsked] = useState<boolean | null>(null);
  const ruleId = useId();
  const data = registries.data;

  return (
    <section className={page.card} aria-labelledby="registries-title">
      <h2 id="registries-title">Container registries</h2>
      <p className={page.muted}>
        A docker server whose image is not on the Docker host gets it pulled from the registry its
        name gives (Docker Hub for a name without one). List a registry to pull from it with a
        username and password or token: they are stored encrypted and never shown again.
      </p>
      {data === undefined ? (
        registries.isError ? (
          <Alert tone="error">{errorMessage(registries.error)}</Alert>
        ) : (
          <p className={page.placeholder} role="status">
            Loading registries…
          </p>
        )
      ) : (
        <>
          <div className={styles.check}>
            <input
              id={ruleId}
              type="checkbox"
              // As asked while it is saved; the saved rule otherwise (a refusal puts it back).
              // The asked value is React state set in the click itself: the mutation's own
              // pending state arrives a tick later, and a controlled checkbox would meanwhile be
              // put back to the saved rule.
              checked={asked ?? data.restricted}
              disabled={rule.isPending}
              onChange={(event) => {
                setAsked(event.target.checked);
                rule.mutate(event.target.checked, {
                  onSettled: () => {
                    setAsked(null);
                  },
                });
              }}
            />
            <label htmlFor={ruleId}>
              Pull images only from the registries listed here (images already on the Docker host
              still run)
            </label>
          </div>
          {rule.isError && <Alert tone="error">{errorMessage(rule.error)}</Alert>}
          {data.restricted && data.registries.length === 0 && (
            <Alert tone="info">No registry is listed: no image can be pulled.</Alert>
          )}
          {data.registries.length === 0 ? (
            <p className={page.muted}>
              No registry listed yet: images are pulled without credentials
              {data.restricted ? '' : ', from any registry'}.
            </p>
          ) : (
            <ul className={cards.list} aria-label="Registry list">
              {data.registries.map((registry) => (
                <RegistryRow key={registry.host} registry={registry} />
              ))}
            </ul>
          )}
          <AddRegistry />
        </>
      )}
    </section>
  );
}

type Mode = 'idle' | 'edit' | 'delete';

function RegistryRow({ registry }: { registry: Registry }) {
  const [mode, setMode] = useState<Mode>('idle');
  const update = useUpdateRegistry(registry.host);
  const remove = useDeleteRegistry(registry.host);
  const open = (next: Mode) => {
    update.reset();
    remove.reset();
    setMode(next);
  };

  return (
    <li className={cards.row} aria-label={registry.host}>
      <div className={cards.head}>
        <h3 className={cards.name}>
          <code>{registry.host}</code>
        </h3>
      </div>
      <dl className={cards.facts}>
        <div>
          <dt>Signs in as</dt>
          <dd>{registry.username ?? 'Nobody: pulled anonymously'}</dd>
        </div>
        <div>
          <dt>Password</dt>
          <dd>{registry.passwordSet ? 'Stored (never shown)' : 'None'}</dd>
        </div>
        <div>
          <dt>Changed</dt>
          <dd>
            <time dateTime={registry.updatedAt}>{formatModified(registry.updatedAt)}</time>
          </dd>
        </div>
      </dl>
      {mode === 'idle' && (
        <div className={cards.buttons}>
          <button
            type="button"
            className="button secondary"
            aria-label={`Change credentials of ${registry.host}`}
            onClick={() => {
              open('edit');
            }}
          >
            Change credentials
          </button>
          {registry.username !== null && (
            <button
              type="button"
              className="button secondary"
              aria-label={`Remove credentials of ${registry.host}`}
              disabled={update.isPending}
              onClick={() => {
                update.mutate({ username: null });
              }}
            >
              {update.isPending ? 'Removing…' : 'Remove credentials'}
            </button>
          )}
          <button
            type="button"
            className="button secondary"
            aria-label={`Remove ${registry.host}`}
            onClick={() => {
              open('delete');
            }}
          >
            Remove
          </button>
        </div>
      )}
      {mode === 'idle' && update.isError && (
        <Alert tone="error">{errorMessage(update.error)}</Alert>
      )}
      {mode === 'edit' && (
        <CredentialsForm
          registry={registry}
          pending={update.isPending}
          error={update.error}
          onSubmit={(username, password) => {
            update.mutate(
              { username, ...(password === '' ? {} : { password }) },
              {
                onSuccess: () => {
                  setMode('idle');
                },
              },
            );
          }}
          onCancel={() => {
            open('idle');
          }}
        />
      )}
      {mode === 'delete' && (
        <Confirm
          label={`Remove ${registry.host}?`}
          action="Remove registry"
          pendingAction="Removing…"
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
          Forget <strong>{registry.host}</strong> and its credentials? Its images are then pulled
          anonymously, or not at all while pulls are limited to the listed registries.
        </Confirm>
      )}
    </li>
  );
}

/** A registry's username and password; an empty password keeps the stored one. */
function CredentialsForm({
  registry,
  pending,
  error,
  onSubmit,
  onCancel,
}: {
  registry: Registry;
  pending: boolean;
  error: unknown;
  onSubmit: (username: string, password: string) => void;
  onCancel: () => void;
}) {
  const [username, setUsername] = useState(registry.username ?? '');
  const [password, setPassword] = useState('');
  const [missing, setMissing] = useState<'username' | 'password' | null>(null);
  const submit = (event: SyntheticEvent) => {
    event.preventDefault();
    if (username.trim() === '') {
      setMissing('username');
      return;
    }
    if (password === '' && !registry.passwordSet) {
      setMissing('password');
      return;
    }
    setMissing(null);
    onSubmit(username.trim(), password);
  };
  return (
    <form
      className={styles.form}
      onSubmit={submit}
      aria-label={`Credentials of ${registry.host}`}
      noValidate
    >
      <div className={styles.fields}>
        <Field
          label="Username"
          autoComplete="off"
          spellCheck={false}
          value={username}
          error={missing === 'username' ? 'Enter the username' : fieldError(error, 'username')}
          onChange={(event) => {
            setUsername(event.target.value);
          }}
        />
        <Field
          label="Password or token"
          type="password"
          autoComplete="new-password"
          hint={registry.passwordSet ? 'Empty: keep the stored one' : undefined}
          value={password}
          error={
            missing === 'password' ? 'Enter the password or token' : fieldError(error, 'password')
          }
          onChange={(event) => {
            setPassword(event.target.value);
          }}
        />
      </div>
      {generalError(error) != null && <Alert tone="error">{errorMessage(error)}</Alert>}
      <FormButtons
        submit="Save credentials"
        pendingSubmit="Saving…"
        pending={pending}
        onCancel={onCancel}
        lockCancel
      />
    </form>
  );
}

/** Lists a registry: its host, and credentials or none. */
function AddRegistry() {
  const add = useAddRegistry();
  const [host, setHost] = useState('');
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [noHost, setNoHost] = useState(false);
  const [added, setAdded] = useState<string | null>(null);
  const submit = (event: SyntheticEvent) => {
    event.preventDefault();
    setAdded(null);
    if (host.trim() === '') {
      setNoHost(true);
      return;
    }
    setNoHost(false);
    add.mutate(
      {
        host: host.trim(),
        ...(username.trim() === '' ? {} : { username: username.trim() }),
        ...(password === '' ? {} : { password }),
      },
      {
        onSuccess: (registry) => {
          setAdded(registry.host);
          setHost('');
          setUsername('');
          setPassword('');
        },
      },
    );
  };
  return (
    <form className={styles.form} onSubmit={submit} aria-label="New registry" noValidate>
      <h3 className={cards.name}>List a registry</h3>
      <div className={styles.fields}>
        <Field
          label="Registry host"
          autoComplete="off"
          spellCheck={false}
          inputMode="url"
          placeholder="ghcr.io"
          hint="As images name it, e.g. ghcr.io or registry.example:5000; docker.io for Docker Hub"
          value={host}
          error={noHost ? "Enter the registry's host" : fieldError(add.error, 'host')}
          onChange={(event) => {
            setHost(event.target.value);
          }}
        />
        <Field
          label="Username"
          autoComplete="off"
          spellCheck={false}
          hint="Optional: empty pulls anonymously"
          value={username}
          error={fieldError(add.error, 'username')}
          onChange={(event) => {
            setUsername(event.target.value);
          }}
        />
        <Field
          label="Password or token"
          type="password"
          autoComplete="new-password"
          hint="With a username; never shown again"
          value={password}
          error={fieldError(add.error, 'password')}
          onChange={(event) => {
            setPassword(event.target.value);
          }}
        />
      </div>
      {generalError(add.error) != null && <Alert tone="error">{errorMessage(add.error)}</Alert>}
      {added !== null && <Alert tone="success">{added} listed</Alert>}
      <div className={cards.buttons}>
        <button type="submit" className="button primary" disabled={add.isPending}>
          {add.isPending ? 'Adding…' : 'Add registry'}
        </button>
      </div>
    </form>
  );
}
