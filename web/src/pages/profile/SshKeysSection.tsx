import { useState, type SyntheticEvent } from 'react';
import { errorMessage, fieldError } from '../../api/errors';
import { Alert } from '../../components/Alert';
import { Confirm } from '../../components/Confirm';
import { Field, TextAreaField } from '../../components/Field';
import { useSftp } from '../../hooks/useSftp';
import { useAddSshKey, useDeleteSshKey, useSshKeys, type SshKey } from '../../hooks/useSshKeys';
import page from '../Page.module.css';
import { formatModified } from '../server/files/paths';
import cards from '../../components/Cards.module.css';
import { identityErrors } from './confirmIdentity';
import { ConfirmIdentityFields, useConfirmIdentity } from './ConfirmIdentityFields';
import keyForm from './KeyForm.module.css';
import { algorithmName, commentOf } from './sshKeys';
import styles from './SshKeys.module.css';

/**
 * The caller's SSH public keys, for SFTP: each with its type, fingerprint and last use, Delete
 * (asked in place); a form to add one, which asks for the password (and a code with two-factor
 * sign-in) as an API key does; and the SFTP server's host key fingerprint to check on the first
 * connection.
 */
export function SshKeysSection({ hasPassword }: { hasPassword: boolean }) {
  const keys = useSshKeys();
  return (
    <section className={page.card} aria-labelledby="ssh-keys-title">
      <h2 id="ssh-keys-title">SSH keys</h2>
      <p className={page.muted}>
        Sign in to SFTP (FileZilla, WinSCP, <code>sftp</code>) with a key of your computer instead
        of your password. Add its public half here; the private half never leaves your computer.
      </p>
      <HostKey />
      {keys.isPending ? (
        <p className={page.placeholder} role="status">
          Loading SSH keys…
        </p>
      ) : keys.isError ? (
        <Alert tone="error">{errorMessage(keys.error)}</Alert>
      ) : keys.data.length === 0 ? (
        <div className={page.placeholder}>
          <p className={page.emptyTitle}>No SSH keys yet</p>
          <p>Add the public key of each computer you connect from.</p>
        </div>
      ) : (
        <ul className={cards.list} aria-label="SSH keys">
          {keys.data.map((key) => (
            <SshKeyRow key={key.id} sshKey={key} />
          ))}
        </ul>
      )}
      <AddSshKey hasPassword={hasPassword} />
    </section>
  );
}

/** The SFTP server's host key fingerprint, or that SFTP is off; nothing while it is asked. */
function HostKey() {
  const sftp = useSftp();
  if (sftp.data === undefined) return null;
  if (!sftp.data.enabled || sftp.data.hostKeyFingerprint === null) {
    return (
      <p className={page.muted}>SFTP is off on this panel: keys added here work once it is on.</p>
    );
  }
  return (
    <div className={styles.hostKey} role="group" aria-label="SFTP host key">
      <p className={styles.hostKeyLabel}>SFTP host key fingerprint</p>
      <code className={styles.fingerprint}>{sftp.data.hostKeyFingerprint}</code>
      <p className={page.muted}>Check this fingerprint the first time your SFTP client connects.</p>
    </div>
  );
}

function SshKeyRow({ sshKey }: { sshKey: SshKey }) {
  const remove = useDeleteSshKey();
  const [confirming, setConfirming] = useState(false);
  return (
    <li className={cards.row} aria-label={sshKey.name}>
      <div className={cards.head}>
        <h3 className={cards.name}>{sshKey.name}</h3>
        <span className={styles.algorithm}>{algorithmName(sshKey.algorithm)}</span>
      </div>
      <dl className={cards.facts}>
        <div className={cards.wide}>
          <dt>Fingerprint</dt>
          <dd>
            <code className={styles.fingerprint}>{sshKey.fingerprint}</code>
          </dd>
        </div>
        <div>
          <dt>Added</dt>
          <dd>
            <time dateTime={sshKey.createdAt}>{formatModified(sshKey.createdAt)}</time>
          </dd>
        </div>
        <div>
          <dt>Last used</dt>
          <dd>
            {sshKey.lastUsedAt === null ? (
              'Never'
            ) : (
              <time dateTime={sshKey.lastUsedAt}>{formatModified(sshKey.lastUsedAt)}</time>
            )}
          </dd>
        </div>
      </dl>
      {confirming ? (
        <Confirm
          label={`Delete ${sshKey.name}?`}
          action="Delete key"
          pendingAction="Deleting…"
          pending={remove.isPending}
          error={remove.error}
          autoFocus
          onConfirm={() => {
            remove.mutate(sshKey.id);
          }}
          onCancel={() => {
            remove.reset();
            setConfirming(false);
          }}
        >
          Delete the key <strong>{sshKey.name}</strong>? It signs in to SFTP no more, and the SFTP
          sessions signed in with it end now.
        </Confirm>
      ) : (
        <div className={cards.buttons}>
          <button
            type="button"
            className="button secondary"
            aria-label={`Delete ${sshKey.name}`}
            onClick={() => {
              setConfirming(true);
            }}
          >
            Delete
          </button>
        </div>
      )}
    </li>
  );
}

function AddSshKey({ hasPassword }: { hasPassword: boolean }) {
  const add = useAddSshKey();
  const identity = useConfirmIdentity(hasPassword);
  const [name, setName] = useState('');
  // Until a name is typed, the pasted key's comment is its name.
  const [nameTyped, setNameTyped] = useState(false);
  const [publicKey, setPublicKey] = useState('');
  const [added, setAdded] = useState<SshKey | null>(null);
  const confirmErrors = identityErrors(add.error);
  const nameError = fieldError(add.error, 'name');
  const keyError = fieldError(add.error, 'publicKey');
  const besideFields = [confirmErrors.password, confirmErrors.code, nameError, keyError].some(
    (e) => e !== undefined,
  );

  const submit = (event: SyntheticEvent) => {
    event.preventDefault();
    setAdded(null);
    const body = {
      name: name.trim(),
      publicKey,
      ...identity.body,
    };
    add.mutate(body, {
      onSuccess: (key) => {
        setName('');
        setNameTyped(false);
        setPublicKey('');
        identity.clear();
        setAdded(key);
      },
      onError: () => {
        identity.setCode('');
      },
    });
  };

  return (
    <form className={keyForm.form} onSubmit={submit} aria-labelledby="new-ssh-key-title">
      <h3 id="new-ssh-key-title" className={keyForm.formTitle}>
        Add an SSH key
      </h3>
      {added !== null && (
        <Alert tone="success">
          Added <strong>{added.name}</strong>, fingerprint{' '}
          <code className={styles.fingerprint}>{added.fingerprint}</code>
        </Alert>
      )}
      <Field
        label="Name"
        name="ssh-key-name"
        required
        maxLength={100}
        autoComplete="off"
        hint="Which computer it is on, e.g. laptop"
        value={name}
        error={nameError}
        onChange={(event) => {
          setName(event.target.value);
          setNameTyped(event.target.value !== '');
        }}
      />
      <TextAreaField
        label="Public key"
        name="ssh-key-public"
        required
        rows={4}
        spellCheck={false}
        autoComplete="off"
        autoCapitalize="off"
        hint="Paste the line of your id_ed25519.pub"
        placeholder="ssh-ed25519 AAAA… you@computer"
        value={publicKey}
        error={keyError}
        onChange={(event) => {
          const pasted = event.target.value;
          setPublicKey(pasted);
          if (!nameTyped) setName(commentOf(pasted));
        }}
      />
      <ConfirmIdentityFields
        identity={identity}
        errors={confirmErrors}
        name="ssh-key"
        noPassword="Your account has no password: a key is added only within ten minutes of signing in."
      />
      {add.isError && !besideFields && <Alert tone="error">{errorMessage(add.error)}</Alert>}
      <div className={cards.buttons}>
        <button type="submit" className="button primary" disabled={add.isPending}>
          {add.isPending ? 'Adding…' : 'Add SSH key'}
        </button>
      </div>
    </form>
  );
}
