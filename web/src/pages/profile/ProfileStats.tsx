import { errorMessage } from '../../api/errors';
import { Alert } from '../../components/Alert';
import { useProfileStats } from '../../hooks/useProfile';
import page from '../Page.module.css';
import { formatWhen } from '../users/users';
import styles from './ProfilePage.module.css';

interface SignIn {
  readonly hasPassword: boolean;
  readonly providers: readonly string[];
}

/** How the account signs in: "Password", "Password, keycloak", "keycloak". */
function signInWays(signIn: SignIn): string {
  const ways = [...(signIn.hasPassword ? ['Password'] : []), ...signIn.providers];
  return ways.length === 0 ? 'None' : ways.join(', ');
}

/** The account's statistics (`GET /api/profile/stats`). */
export function ProfileStats({ signIn }: { signIn: SignIn | undefined }) {
  const stats = useProfileStats();
  return (
    <section
      className={page.card}
      aria-labelledby="profile-stats-title"
      aria-busy={stats.isPending}
    >
      <h2 id="profile-stats-title">Your account</h2>
      {stats.isError ? (
        <Alert tone="error">{errorMessage(stats.error)}</Alert>
      ) : stats.data === undefined ? (
        <p className={page.muted} role="status">
          Loading statistics…
        </p>
      ) : (
        <dl className={styles.stats}>
          <div>
            <dt>Username</dt>
            <dd>{stats.data.username}</dd>
          </div>
          <div>
            <dt>Role</dt>
            <dd>{stats.data.role}</dd>
          </div>
          <div>
            <dt>Member since</dt>
            <dd>{formatWhen(stats.data.createdAt)}</dd>
          </div>
          <div>
            <dt>Last password sign-in</dt>
            <dd>{formatWhen(stats.data.lastLoginAt)}</dd>
          </div>
          {signIn !== undefined && (
            <div>
              <dt>Signs in with</dt>
              <dd>{signInWays(signIn)}</dd>
            </div>
          )}
          <div>
            <dt>Servers you can reach</dt>
            <dd>{stats.data.serverCount}</dd>
          </div>
          <div>
            <dt>Tickets opened</dt>
            <dd>
              {stats.data.tickets.total}
              {stats.data.tickets.total > 0 &&
                ` (${stats.data.tickets.pending} pending, ${stats.data.tickets.in_progress} in progress, ${stats.data.tickets.closed} closed)`}
            </dd>
          </div>
          <div>
            <dt>Ticket messages written</dt>
            <dd>{stats.data.messagesWritten}</dd>
          </div>
        </dl>
      )}
    </section>
  );
}
