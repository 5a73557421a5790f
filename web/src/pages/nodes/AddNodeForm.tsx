import { useEffect, useId, useRef, useState, type ReactNode, type SyntheticEvent } from 'react';
import { ApiError, errorMessage } from '../../api/errors';
import { Alert } from '../../components/Alert';
import { Field } from '../../components/Field';
import { FormButtons } from '../../components/FormButtons';
import { useAddNode } from '../../hooks/useNodes';
import page from '../Page.module.css';
import {
  EMPTY_DRAFT,
  kindOf,
  newNodeBody,
  refusalByField,
  type ConnectionKind,
  type NodeDraft,
  type NodeField,
  type Problems,
} from './model';
import { CapacityFields } from './CapacityFields';
import { PemField } from './PemField';
import styles from './Nodes.module.css';

const FIELDS: readonly NodeField[] = [
  'name',
  'dockerHost',
  'tls',
  'ca',
  'cert',
  'key',
  'sshKey',
  'sshHostKey',
  'publicAddress',
  'memoryGiB',
  'diskGiB',
  'memoryOverallocate',
  'diskOverallocate',
];

const KINDS: readonly { value: ConnectionKind; label: string; hint: ReactNode }[] = [
  {
    value: 'tls',
    label: 'Mutual TLS',
    hint: (
      <>
        tcp://host:2376, the engine run with <code>--tlsverify</code>
      </>
    ),
  },
  { value: 'ssh', label: 'SSH', hint: 'ssh://user@host, with the docker CLI on the node' },
];

/**
 * Admins add a node: its name, its engine's address and how the panel is let in (the three PEM
 * texts of mutual TLS, or an SSH key, each pasted or read from a file), where players connect
 * and what it offers. The engine is asked before anything is saved; its refusal (503
 * `NODE_UNREACHABLE`, the reason in words) is shown at the top of the form, which keeps
 * everything typed so that one part can be mended.
 */
export function AddNodeForm() {
  const add = useAddNode();
  const [draft, setDraft] = useState<NodeDraft>(EMPTY_DRAFT);
  const [problems, setProblems] = useState<Problems<NodeField>>({});
  const [added, setAdded] = useState<string | null>(null);
  const top = useRef<HTMLDivElement>(null);
  const maintenanceId = useId();
  const refusal = add.error instanceof ApiError ? refusalByField(FIELDS, add.error) : null;
  const problem = (field: NodeField) => problems[field] ?? refusal?.fields[field];
  const topMessage = refusal?.top ?? null;

  // The form is long and its button at the end: the engine's refusal is brought into view.
  useEffect(() => {
    if (topMessage !== null) top.current?.scrollIntoView({ block: 'nearest' });
  }, [topMessage]);

  const set = (changes: Partial<NodeDraft>) => {
    setAdded(null);
    setDraft((current) => ({ ...current, ...changes }));
  };
  const submit = (event: SyntheticEvent) => {
    event.preventDefault();
    setAdded(null);
    const result = newNodeBody(draft);
    if ('problems' in result) {
      add.reset();
      setProblems(result.problems);
      return;
    }
    setProblems({});
    add.mutate(result.body, {
      onSuccess: (node) => {
        setAdded(node.name);
        setDraft(EMPTY_DRAFT);
      },
    });
  };
  const marked = Object.keys(problems).length > 0 || (refusal !== null && !refusal.rest);

  return (
    <section className={page.card} aria-labelledby="add-node-title">
      <h2 id="add-node-title">Add a node</h2>
      <p className={page.muted}>
        A node is a machine with a Docker engine that the panel reaches over the engine&apos;s own
        API: with mutual TLS (dockerd run with <code>--tlsverify</code> and certificates made with
        openssl) or over SSH. No agent is installed on it. The engine is asked before anything is
        saved. The steps, from the certificates to the firewall rule, are in{' '}
        <code>docs/nodes.md</code> of the panel&apos;s documentation.
      </p>
      <form className={styles.form} onSubmit={submit} aria-label="New node" noValidate>
        {topMessage !== null && (
          <div ref={top}>
            <Alert tone="error">{topMessage}</Alert>
          </div>
        )}
        <div className={styles.fields}>
          <Field
            label="Name"
            autoComplete="off"
            spellCheck={false}
            autoCapitalize="none"
            placeholder="eu-1"
            hint="Lower-case letters, digits and dashes, at most 32"
            value={draft.name}
            error={problem('name')}
            onChange={(event) => {
              set({ name: event.target.value });
            }}
          />
          <Field
            label="Docker host"
            autoComplete="off"
            spellCheck={false}
            autoCapitalize="none"
            inputMode="url"
            placeholder="tcp://203.0.113.10:2376"
            hint="The engine's address: tcp://host:2376 or ssh://user@host"
            value={draft.dockerHost}
            error={problem('dockerHost')}
            onChange={(event) => {
              const dockerHost = event.target.value;
              set({ dockerHost, kind: kindOf(dockerHost) ?? draft.kind });
            }}
          />
        </div>

        <fieldset className={styles.group}>
          <legend className={styles.legend}>Connection</legend>
          <div className={styles.choices}>
            {KINDS.map((kind) => (
              <label key={kind.value} className={styles.choice}>
                <input
                  type="radio"
                  name="node-connection"
                  value={kind.value}
                  checked={draft.kind === kind.value}
                  onChange={() => {
                    set({ kind: kind.value });
                  }}
                />
                <span className={styles.choiceText}>
                  {kind.label}
                  <span className={styles.choiceHint}>{kind.hint}</span>
                </span>
              </label>
            ))}
          </div>
        </fieldset>

        {draft.kind === 'tls' ? (
          <fieldset className={styles.group}>
            <legend className={styles.legend}>TLS certificates</legend>
            <p className={page.muted}>
              Paste each PEM text, or choose its file: they are stored encrypted and never shown
              again.
            </p>
            {problem('tls') !== undefined && <Alert tone="error">{problem('tls')}</Alert>}
            <div className={styles.pems}>
              <PemField
                label="CA certificate"
                fileLabel="Or choose ca.pem"
                hint="ca.pem: the CA that signed the engine's certificate"
                placeholder="-----BEGIN CERTIFICATE-----"
                value={draft.ca}
                error={problem('ca')}
                onChange={(ca) => {
                  set({ ca });
                }}
              />
              <PemField
                label="Client certificate"
                fileLabel="Or choose cert.pem"
                hint="cert.pem: the certificate the panel shows the engine, signed by that CA"
                placeholder="-----BEGIN CERTIFICATE-----"
                value={draft.cert}
                error={problem('cert')}
                onChange={(cert) => {
                  set({ cert });
                }}
              />
              <PemField
                label="Client key"
                fileLabel="Or choose key.pem"
                hint="key.pem: the client certificate's private key, without a passphrase"
                placeholder="-----BEGIN PRIVATE KEY-----"
                value={draft.key}
                error={problem('key')}
                onChange={(key) => {
                  set({ key });
                }}
              />
            </div>
          </fieldset>
        ) : (
          <fieldset className={styles.group}>
            <legend className={styles.legend}>SSH</legend>
            <PemField
              label="Private key"
              fileLabel="Or choose the key file"
              hint="The key the panel signs in with (OpenSSH or PEM, no passphrase); its public key goes in the node user's authorized_keys. Stored encrypted, never shown again."
              placeholder="-----BEGIN OPENSSH PRIVATE KEY-----"
              value={draft.sshKey}
              error={problem('sshKey')}
              onChange={(sshKey) => {
                set({ sshKey });
              }}
            />
            <Field
              label="Host key"
              autoComplete="off"
              spellCheck={false}
              autoCapitalize="none"
              placeholder="ssh-ed25519 AAAA…"
              hint="Optional: the node's line of ssh-keyscan. Empty: the key it shows now is pinned"
              value={draft.sshHostKey}
              error={problem('sshHostKey')}
              onChange={(event) => {
                set({ sshHostKey: event.target.value });
              }}
            />
          </fieldset>
        )}

        <fieldset className={styles.group}>
          <legend className={styles.legend}>Players and capacity</legend>
          <div className={styles.fields}>
            <Field
              label="Public address"
              autoComplete="off"
              spellCheck={false}
              autoCapitalize="none"
              placeholder="eu-1.play.example.com"
              hint="The host name or address players connect to"
              value={draft.publicAddress}
              error={problem('publicAddress')}
              onChange={(event) => {
                set({ publicAddress: event.target.value });
              }}
            />
          </div>
          <CapacityFields
            draft={draft}
            problem={problem}
            onChange={(changes) => {
              set(changes);
            }}
          />
          <div className={styles.check}>
            <input
              id={maintenanceId}
              type="checkbox"
              checked={draft.maintenance}
              onChange={(event) => {
                set({ maintenance: event.target.checked });
              }}
            />
            <label htmlFor={maintenanceId}>
              In maintenance: no new server is placed on it, none of its servers starts
            </label>
          </div>
        </fieldset>

        {refusal?.rest === true || (add.isError && refusal === null) ? (
          <Alert tone="error">{errorMessage(add.error)}</Alert>
        ) : (
          marked && (
            <p className={styles.problem}>
              {topMessage === null
                ? 'Not added: see the fields marked above.'
                : 'Not added: see why at the top of the form.'}
            </p>
          )
        )}
        {added !== null && <Alert tone="success">Node {added} added</Alert>}
        <FormButtons submit="Add node" pendingSubmit="Asking the engine…" pending={add.isPending} />
      </form>
    </section>
  );
}
