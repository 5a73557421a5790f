import { useId, useState, type SyntheticEvent } from 'react';
import { errorMessage, fieldError } from '../../api/errors';
import { Alert } from '../../components/Alert';
import { Confirm } from '../../components/Confirm';
import { Field } from '../../components/Field';
import { ShownOnce } from '../../components/ShownOnce';
import { useApiKeys, useCreateApiKey, useRevokeApiKey, type ApiKey } from '../../hooks/useApiKeys';
import { useServers } from '../../hooks/useServers';
import page from '../Page.module.css';
import { formatModified } from '../server/files/paths';
import { PermissionBoxes } from '../server/people/PermissionBoxes';
import { PERMISSIONS, type Permission } from '../server/permissions';
import { describePermissions, describeServers, newKeyBody } from './apiKeys';
import cards from '../../components/Cards.module.css';
import styles from './ApiKeys.module.css';
import { identityErrors } from './confirmIdentity';
import { ConfirmIdentityFields, useConfirmIdentity } from './ConfirmIdentityFields';
import keyForm from './KeyForm.module.css';

const ALL_PERMISSIONS: ReadonlySet<Permission> = new Set(PERMISSIONS);

/**
 * The caller's API keys: each with its scope and last use, Revoke; a form to make one, whose
 * token is shown once, and which asks for the password (and a code with two-factor sign-in). A
 * key signs requests as `Authorization: Bearer gpk_…`.
 */
export function ApiKeysSection({ hasPassword }: { hasPassword: boolean }) {
  const keys = useApiKeys();
  const [token, setToken] = useState<{ name: string; token: string } | null>(null);

  return (
    <section className={page.card} aria-labelledby="api-keys-title">
      <h2 id="api-keys-title">API keys</h2>
      <p className={page.muted}>
        A key lets a script use the panel as you: send it as{' '}
        <code>Authorization: Bearer gpk_…</code>. Limit it to some servers and permissions, and
        revoke it when it is no longer needed. A key cannot manage keys, two-factor sign-in or your
        password.
      </p>
      {token !== null && (
        <ShownOnce
          label={`Token of the key ${token.name}`}
          value={token.token}
          onDone={() => {
            setToken(null);
          }}
        >
          Revoke the key and make another if it is lost.
        </ShownOnce>
      )}
      {keys.isPending ? (
        <p className={page.placeholder} role="status">
          Loading API keys…
        </p>
      ) : keys.isError ? (
        <Alert tone="error">{errorMessage(keys.error)}</Alert>
      ) : keys.data.length === 0 ? (
        <div className={page.placeholder}>
          <p className={page.emptyTitle}>No API keys yet</p>
          <p>Make one below for a script or another tool.</p>
        </div>
      ) : (
        <ul className={cards.list} aria-label="API keys">
          {keys.data.map((key) => (
            <ApiKeyRow key={key.id} apiKey={key} />
          ))}
        </ul>
      )}
      <CreateApiKey
        hasPassword={hasPassword}
        onCreated={(name, value) => {
          setToken({ name, token: value });
        }}
      />
    </section>
  );
}

function ApiKeyRow({ apiKey }: { apiKey: ApiKey }) {
  const revoke = useRevokeApiKey();
  const [confirming, setConfirming] = useState(false);
  return (
    <li className={cards.row} aria-label={apiKey.name}>
      <div className={cards.head}>
        <h3 className={cards.name}>{apiKey.name}</h3>
        <code className={styles.prefix} title="The start of the key's token">
          {apiKey.prefix}…
        </code>
        {apiKey.expired && <span className={styles.expired}>Expired</span>}
      </div>
      <dl className={cards.facts}>
        <div>
          <dt>Servers</dt>
          <dd>{describeServers(apiKey.servers)}</dd>
        </div>
        <div>
          <dt>Permissions</dt>
          <dd>{describePermissions(apiKey.permissions)}</dd>
        </div>
        <div>
          <dt>Created</dt>
          <dd>
            <time dateTime={apiKey.createdAt}>{formatModified(apiKey.createdAt)}</time>
          </dd>
        </div>
        <div>
          <dt>Expires</dt>
          <dd>
            {apiKey.expiresAt === null ? (
              'Never'
            ) : (
              <time dateTime={apiKey.expiresAt}>{formatModified(apiKey.expiresAt)}</time>
            )}
          </dd>
        </div>
        <div>
          <dt>Last used</dt>
          <dd>
            {apiKey.lastUsedAt === null ? (
              'Never'
            ) : (
              <>
                <time dateTime={apiKey.lastUsedAt}>{formatModified(apiKey.lastUsedAt)}</time>
                {apiKey.lastUsedAddress !== null && ` from ${apiKey.lastUsedAddress}`}
              </>
            )}
          </dd>
        </div>
      </dl>
      {confirming ? (
        <Confirm
          label={`Revoke ${apiKey.name}?`}
          action="Revoke key"
          pendingAction="Revoking…"
          pending={revoke.isPending}
          error={revoke.error}
          autoFocus
          onConfirm={() => {
            revoke.mutate(apiKey.id);
          }}
          onCancel={() => {
            revoke.reset();
            setConfirming(false);
          }}
        >
          Revoke the key <strong>{apiKey.name}</strong>? Scripts using it are refused from now on.
          This cannot be undone.
        </Confirm>
      ) : (
        <div className={cards.buttons}>
          <button
            type="button"
            className="button secondary"
            aria-label={`Revoke ${apiKey.name}`}
            onClick={() => {
              setConfirming(true);
            }}
          >
            Revoke
          </button>
        </div>
      )}
    </li>
  );
}

/** "All" or "Only these": a scope's choice, as two radio buttons. */
function ScopeChoice({
  legend,
  all,
  some,
  limited,
  onChange,
}: {
  legend: string;
  all: string;
  some: string;
  limited: boolean;
  onChange: (limited: boolean) => void;
}) {
  const name = useId();
  return (
    <div role="radiogroup" aria-label={legend} className={styles.choice}>
      <span className={styles.legend}>{legend}</span>
      <label className={styles.radio}>
        <input
          type="radio"
          name={name}
          checked={!limited}
          onChange={() => {
            onChange(false);
          }}
        />
        {all}
      </label>
      <label className={styles.radio}>
        <input
          type="radio"
          name={name}
          checked={limited}
          onChange={() => {
            onChange(true);
          }}
        />
        {some}
      </label>
    </div>
  );
}

function CreateApiKey({
  hasPassword,
  onCreated,
}: {
  hasPassword: boolean;
  onCreated: (name: string, token: string) => void;
}) {
  const create = useCreateApiKey();
  const servers = useServers();
  const identity = useConfirmIdentity(hasPassword);
  const [name, setName] = useState('');
  const [expires, setExpires] = useState('');
  const [chosenServers, setChosenServers] = useState<ReadonlySet<string> | null>(null);
  const [permissions, setPermissions] = useState<ReadonlySet<Permission> | null>(null);
  const at = (field: string) => fieldError(create.error, field);
  const confirmErrors = identityErrors(create.error);

  const submit = (event: SyntheticEvent) => {
    event.preventDefault();
    const body = {
      ...newKeyBody({ name, expires, servers: chosenServers, permissions }, PERMISSIONS),
      ...identity.body,
    };
    create.mutate(body, {
      onSuccess: ({ key, token }) => {
        setName('');
        setExpires('');
        setChosenServers(null);
        setPermissions(null);
        identity.clear();
        onCreated(key.name, token);
      },
      onError: () => {
        identity.setCode('');
      },
    });
  };

  return (
    <form className={keyForm.form} onSubmit={submit} aria-labelledby="new-api-key-title">
      <h3 id="new-api-key-title" className={keyForm.formTitle}>
        New API key
      </h3>
      <div className={keyForm.fields}>
        <Field
          label="Key name"
          name="api-key-name"
          required
          maxLength={100}
          autoComplete="off"
          hint="What it is for, e.g. backup script"
          value={name}
          error={at('name')}
          onChange={(event) => {
            setName(event.target.value);
          }}
        />
        <Field
          label="Expires on"
          name="api-key-expires"
          type="date"
          hint="Optional: it works until the end of that day; empty: never expires"
          value={expires}
          error={at('expiresAt')}
          onChange={(event) => {
            setExpires(event.target.value);
          }}
        />
      </div>
      <ScopeChoice
        legend="Servers"
        all="All my servers"
        some="Only these servers"
        limited={chosenServers !== null}
        onChange={(limited) => {
          setChosenServers(limited ? new Set() : null);
        }}
      />
      {chosenServers !== null && (
        <fieldset className={styles.boxes}>
          <legend className={styles.legend}>Servers the key may reach</legend>
          {servers.isPending ? (
            <p className={page.muted} role="status">
              Loading your servers…
            </p>
          ) : servers.isError ? (
            <Alert tone="error">{errorMessage(servers.error)}</Alert>
          ) : servers.data.length === 0 ? (
            <p className={page.muted}>You have no servers yet.</p>
          ) : (
            servers.data.map((server) => (
              <label key={server.name} className={styles.box}>
                <input
                  type="checkbox"
                  aria-label={`Key server: ${server.name}`}
                  checked={chosenServers.has(server.name)}
                  onChange={(event) => {
                    const next = new Set(chosenServers);
                    if (event.target.checked) next.add(server.name);
                    else next.delete(server.name);
                    setChosenServers(next);
                  }}
                />
                <span>
                  {server.displayName}{' '}
                  {server.displayName !== server.name && (
                    <code className={page.muted}>{server.name}</code>
                  )}
                </span>
              </label>
            ))
          )}
          {at('servers') !== undefined && <p className={styles.error}>{at('servers')}</p>}
        </fieldset>
      )}
      <ScopeChoice
        legend="Permissions"
        all="All permissions"
        some="Only these permissions"
        limited={permissions !== null}
        onChange={(limited) => {
          setPermissions(limited ? new Set() : null);
        }}
      />
      {permissions !== null && (
        <PermissionBoxes
          who="Key"
          legend="What the key may do on servers (nothing outside them but reading your account)"
          chosen={permissions}
          grantable={ALL_PERMISSIONS}
          onChange={setPermissions}
        />
      )}
      <ConfirmIdentityFields
        identity={identity}
        errors={confirmErrors}
        name="api-key"
        noPassword="Your account has no password: a key is made only within ten minutes of signing in."
      />
      {create.isError &&
        confirmErrors.password === undefined &&
        confirmErrors.code === undefined && (
          <Alert tone="error">{errorMessage(create.error)}</Alert>
        )}
      <div className={cards.buttons}>
        <button type="submit" className="button primary" disabled={create.isPending}>
          {create.isPending ? 'Creating…' : 'Create API key'}
        </button>
      </div>
    </form>
  );
}
