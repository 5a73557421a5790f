import { useId, useState } from 'react';
import { Link } from 'react-router';
import { errorMessage } from '../../api/errors';
import { Alert } from '../../components/Alert';
import cards from '../../components/Cards.module.css';
import { Confirm } from '../../components/Confirm';
import { useDeleteNode, useUpdateNode, type Node } from '../../hooks/useNodes';
import { formatAgo, formatBytes } from '../server/format';
import { Usage } from '../server/Usage';
import {
  capacityNote,
  capacityText,
  connectionText,
  engineText,
  healthLabel,
  reasonText,
} from './model';
import { NodeSettingsForm } from './NodeSettingsForm';
import styles from './Nodes.module.css';

type Mode = 'idle' | 'edit' | 'delete';

/**
 * One node: how it is reached, its health as the panel last heard it (the engine's version, CPUs
 * and memory; why it is unreachable), what its servers' limits add up to against what it offers,
 * the servers on it, its maintenance switch (saved as it is flipped), Edit settings and Remove
 * (asked in place; `local` cannot be removed, so it is not offered).
 */
export function NodeCard({ node }: { node: Node }) {
  const [mode, setMode] = useState<Mode>('idle');
  const maintenance = useUpdateNode(node.name);
  const remove = useDeleteNode(node.name);
  const [asked, setAsked] = useState<boolean | null>(null);
  const switchId = useId();
  const { health, allocated } = node;
  const isLocal = node.connection === 'local';
  const open = (next: Mode) => {
    remove.reset();
    setMode(next);
  };
  const memoryNote = capacityNote(node.memoryBytes, node.memoryOverallocatePercent);
  const diskNote = capacityNote(node.diskBytes, node.diskOverallocatePercent);

  return (
    <li className={`${cards.row} ${styles.row}`} aria-label={node.name}>
      <div className={cards.head}>
        <h3 className={cards.name}>{node.name}</h3>
        <span className={`${styles.badge} ${styles[health.status]}`}>{healthLabel(health)}</span>
        {node.maintenance && (
          <span className={`${styles.badge} ${styles.maintenance}`}>Maintenance</span>
        )}
      </div>
      <dl className={cards.facts}>
        <div>
          <dt>Connection</dt>
          <dd>{connectionText(node.connection)}</dd>
        </div>
        <div className={node.dockerHost === null ? undefined : styles.wideFact}>
          <dt>Docker host</dt>
          <dd>
            {node.dockerHost === null ? (
              "The panel's own (DOCKER_HOST)"
            ) : (
              <code className={styles.code}>{node.dockerHost}</code>
            )}
          </dd>
        </div>
        <div>
          <dt>Public address</dt>
          <dd>
            {node.publicAddress === null ? (
              "None: each allocation's address"
            ) : (
              <code className={styles.code}>{node.publicAddress}</code>
            )}
          </dd>
        </div>
        {health.status === 'online' && (
          <>
            <div>
              <dt>Engine</dt>
              <dd>{engineText(health.engine)}</dd>
            </div>
            <div>
              <dt>CPUs</dt>
              <dd>{health.engine.cpus}</dd>
            </div>
            <div>
              <dt>Memory</dt>
              <dd>{formatBytes(health.engine.memoryBytes)}</dd>
            </div>
          </>
        )}
        {health.status !== 'unknown' && (
          <div>
            <dt>Checked</dt>
            <dd>
              <time dateTime={health.checkedAt}>{formatAgo(health.checkedAt)}</time>
            </dd>
          </div>
        )}
        {health.status === 'unreachable' && (
          <div className={cards.wide}>
            <dt>Why it is unreachable</dt>
            <dd className={styles.reason}>{reasonText(health.reason)}</dd>
          </div>
        )}
        {health.status === 'unknown' && (
          <div className={cards.wide}>
            <dt>Health</dt>
            <dd>Not heard from yet: the panel is asking its engine.</dd>
          </div>
        )}
      </dl>
      <dl className={`${cards.facts} ${styles.capacity}`}>
        <div>
          <dt>Memory allocated</dt>
          <dd>
            <Capacity
              label={`Memory allocated on ${node.name}`}
              allocated={allocated.memoryBytes}
              capacity={allocated.memoryCapacityBytes}
            />
            {memoryNote !== null && <span className={styles.note}>{memoryNote}</span>}
          </dd>
        </div>
        <div>
          <dt>Disk allocated</dt>
          <dd>
            <Capacity
              label={`Disk allocated on ${node.name}`}
              allocated={allocated.diskBytes}
              capacity={allocated.diskCapacityBytes}
            />
            {diskNote !== null && <span className={styles.note}>{diskNote}</span>}
          </dd>
        </div>
        <div className={cards.wide}>
          <dt>Servers on it</dt>
          <dd>
            {node.servers.length === 0 ? (
              'None'
            ) : (
              <ul className={styles.servers} aria-label={`Servers on ${node.name}`}>
                {node.servers.map((server) => (
                  <li key={server}>
                    <Link to={`/servers/${encodeURIComponent(server)}`}>{server}</Link>
                  </li>
                ))}
              </ul>
            )}
          </dd>
        </div>
      </dl>

      <div className={styles.check}>
        <input
          id={switchId}
          type="checkbox"
          role="switch"
          // As asked while it is saved (a refusal puts it back): see Registries.tsx.
          checked={asked ?? node.maintenance}
          disabled={maintenance.isPending}
          onChange={(event) => {
            setAsked(event.target.checked);
            maintenance.mutate(
              { maintenance: event.target.checked },
              {
                onSettled: () => {
                  setAsked(null);
                },
              },
            );
          }}
        />
        <label htmlFor={switchId}>
          Maintenance of {node.name}
          <span className={styles.choiceHint}>
            No new server is placed on it and none of its servers starts
          </span>
        </label>
      </div>
      {maintenance.isError && <Alert tone="error">{errorMessage(maintenance.error)}</Alert>}

      {mode === 'idle' && (
        <div className={cards.buttons}>
          <button
            type="button"
            className="button secondary"
            aria-label={`Edit settings of ${node.name}`}
            onClick={() => {
              open('edit');
            }}
          >
            Edit settings
          </button>
          {!isLocal && (
            <button
              type="button"
              className={`button secondary ${styles.dangerText}`}
              aria-label={`Remove ${node.name}`}
              onClick={() => {
                open('delete');
              }}
            >
              Remove
            </button>
          )}
        </div>
      )}
      {mode === 'edit' && (
        <NodeSettingsForm
          node={node}
          onDone={() => {
            open('idle');
          }}
        />
      )}
      {mode === 'delete' && (
        <Confirm
          label={`Remove ${node.name}?`}
          action="Remove node"
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
          Remove the node <strong>{node.name}</strong> from the panel and forget how to reach it?
          Nothing on the machine is touched.
          {node.servers.length > 0 &&
            ` Servers are on it (${node.servers.length}): the panel refuses until they are moved or deleted.`}
        </Confirm>
      )}
    </li>
  );
}

/** Allocated against capacity, with a meter; "Not counted" without a capacity. */
function Capacity({
  label,
  allocated,
  capacity,
}: {
  label: string;
  allocated: number;
  capacity: number | null;
}) {
  if (capacity === null) return <span>{capacityText(allocated, null)}</span>;
  return (
    <Usage
      label={label}
      meterLabel={label}
      value={allocated}
      limit={capacity}
      format={formatBytes}
    />
  );
}
