import { useId } from 'react';
import type { User } from '../../hooks/useUsers';
import { UserEditor } from './UserEditor';
import { formatWhen, serversSummary, signInSummary } from './users';
import styles from './UsersPage.module.css';

interface UserRowProps {
  readonly user: User;
  /** Every server's name, for the editor. */
  readonly servers: readonly string[];
  readonly canEdit: boolean;
  /** The row of the signed-in account. */
  readonly isMe: boolean;
  readonly expanded: boolean;
  readonly onToggle: () => void;
  readonly onDeleted: (message: string) => void;
}

/** One account: name, role, servers, last sign-in; for an admin, "Edit" opens its editor below. */
export function UserRow({
  user,
  servers,
  canEdit,
  isMe,
  expanded,
  onToggle,
  onDeleted,
}: UserRowProps) {
  const id = useId();
  const nameId = `${id}-name`;
  const editorId = `${id}-editor`;
  return (
    <li className={styles.item}>
      <article aria-labelledby={nameId}>
        <div className={styles.summary}>
          <div className={styles.who}>
            <span className={styles.username} id={nameId}>
              {user.username}
            </span>
            {isMe && <span className={styles.you}>you</span>}
            <span className={styles.role}>{user.role}</span>
          </div>
          <dl className={styles.facts}>
            <div>
              <dt>Servers</dt>
              <dd>{serversSummary(user)}</dd>
            </div>
            <div>
              <dt>Signs in with</dt>
              <dd>{signInSummary(user)}</dd>
            </div>
            <div>
              <dt>Last sign-in</dt>
              <dd>{formatWhen(user.lastLoginAt)}</dd>
            </div>
          </dl>
          {canEdit && (
            <button
              type="button"
              className={`button secondary ${styles.edit}`}
              aria-expanded={expanded}
              aria-controls={expanded ? editorId : undefined}
              onClick={onToggle}
            >
              {expanded ? 'Close' : 'Edit'}
            </button>
          )}
        </div>
        {canEdit && expanded && (
          <UserEditor
            id={editorId}
            user={user}
            servers={servers}
            isMe={isMe}
            onDeleted={onDeleted}
          />
        )}
      </article>
    </li>
  );
}
