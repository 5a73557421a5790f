import { Link, NavLink, Outlet } from 'react-router';
import { errorMessage } from '../api/errors';
import { useSignOut } from '../hooks/useAuth';
import { useMe } from '../hooks/useMe';
import type { Session } from '../session/session';
import { BannedPage } from '../pages/banned/BannedPage';
import { TwoFactorRequiredPage } from '../pages/two-factor/TwoFactorRequiredPage';
import { Alert } from './Alert';
import styles from './Shell.module.css';

/**
 * The frame of every signed-in page: who is signed in, with which role, and "Sign out". The
 * account is read from the API (`/api/auth/me`), which answers banned users too: a banned account
 * sees only the banned page; one whose role requires two-factor sign-in it has not set up sees
 * only its enrolment (the API refuses everything else with 403 `TWO_FACTOR_REQUIRED`).
 */
export function Shell({ session }: { session: Session }) {
  const me = useMe();
  const signOut = useSignOut();
  const username = me.data?.username ?? session.username;
  const role = me.data?.role ?? session.role;
  const mustEnrol = me.data?.twoFactor.mustEnrol === true;
  return (
    <div className={styles.shell}>
      <header className={styles.header}>
        <Link to="/servers" className={styles.brand}>
          Game panel
        </Link>
        {role !== 'banned' && !mustEnrol && (
          <nav aria-label="Main" className={styles.nav}>
            <NavLink to="/servers" className={styles.navLink}>
              Servers
            </NavLink>
            <NavLink to="/tickets" className={styles.navLink}>
              Tickets
            </NavLink>
            {(role === 'admin' || role === 'support') && (
              <NavLink to="/users" className={styles.navLink}>
                Users
              </NavLink>
            )}
            {role === 'admin' && (
              <>
                <NavLink to="/nodes" className={styles.navLink}>
                  Nodes
                </NavLink>
                <NavLink to="/templates" className={styles.navLink}>
                  Templates
                </NavLink>
                <NavLink to="/audit" className={styles.navLink}>
                  Audit log
                </NavLink>
                <NavLink to="/webhooks" className={styles.navLink}>
                  Webhooks
                </NavLink>
                <NavLink to="/settings" className={styles.navLink}>
                  Settings
                </NavLink>
              </>
            )}
            <NavLink to="/profile" className={styles.navLink}>
              Profile
            </NavLink>
          </nav>
        )}
        <div className={styles.account}>
          <span className={styles.who}>
            <span className={styles.username}>{username}</span>
            <span className={styles.role}>{role}</span>
          </span>
          <button type="button" className="button secondary" onClick={signOut}>
            Sign out
          </button>
        </div>
      </header>
      <main className={styles.main}>
        {me.isError && <Alert tone="error">{errorMessage(me.error)}</Alert>}
        {role === 'banned' ? (
          <BannedPage />
        ) : mustEnrol && me.data !== undefined ? (
          <TwoFactorRequiredPage
            role={me.data.role}
            username={me.data.username}
            hasPassword={me.data.signIn.hasPassword}
          />
        ) : (
          <Outlet />
        )}
      </main>
    </div>
  );
}
