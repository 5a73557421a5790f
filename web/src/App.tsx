import { lazy, Suspense, type ReactNode } from 'react';
import { Navigate, Route, Routes, useLocation } from 'react-router';
import { Shell } from './components/Shell';
import { useSession } from './hooks/useSession';
import { NotFoundPage } from './pages/not-found/NotFoundPage';
import { Allowed } from './pages/server/Allowed';
import { BACKUP_PERMISSIONS } from './pages/server/permissions';
import { ServersPage } from './pages/servers/ServersPage';
import { SignInPage } from './pages/sign-in/SignInPage';

// A server's page and each of its tabs (the terminal, the editor, the charts) are fetched when
// first opened: the first page stays small.
const ServerPage = lazy(() => import('./pages/server/ServerPage'));
const ConsoleTab = lazy(() => import('./pages/server/ConsoleTab'));
const StatsTab = lazy(() => import('./pages/server/stats/StatsTab'));
const FilesTab = lazy(() => import('./pages/server/files/FilesTab'));
const SettingsTab = lazy(() => import('./pages/server/settings/SettingsTab'));
const SchedulesTab = lazy(() => import('./pages/server/schedules/SchedulesTab'));
const BackupsTab = lazy(() => import('./pages/server/backups/BackupsTab'));
const PeopleTab = lazy(() => import('./pages/server/people/PeopleTab'));
const TicketsPage = lazy(() => import('./pages/tickets/TicketsPage'));
const NewTicketPage = lazy(() => import('./pages/tickets/NewTicketPage'));
const TicketPage = lazy(() => import('./pages/tickets/TicketPage'));
const UsersPage = lazy(() =>
  import('./pages/users/UsersPage').then((module) => ({ default: module.UsersPage })),
);
const TemplatesPage = lazy(() =>
  import('./pages/templates/TemplatesPage').then((module) => ({ default: module.TemplatesPage })),
);
const NodesPage = lazy(() =>
  import('./pages/nodes/NodesPage').then((module) => ({ default: module.NodesPage })),
);
const AuditPage = lazy(() =>
  import('./pages/audit/AuditPage').then((module) => ({ default: module.AuditPage })),
);
const SettingsPage = lazy(() =>
  import('./pages/settings/SettingsPage').then((module) => ({ default: module.SettingsPage })),
);
const WebhooksPage = lazy(() =>
  import('./pages/webhooks/WebhooksPage').then((module) => ({ default: module.WebhooksPage })),
);
const SetPasswordPage = lazy(() =>
  import('./pages/set-password/SetPasswordPage').then((module) => ({
    default: module.SetPasswordPage,
  })),
);
const ProfilePage = lazy(() =>
  import('./pages/profile/ProfilePage').then((module) => ({ default: module.ProfilePage })),
);

const loading = <p role="status">Loading…</p>;

interface ReturnTo {
  readonly from?: string;
}

/** Signed-in pages: without a session, sign-in first, then back to the page asked for. */
function SignedIn() {
  const { session } = useSession();
  const location = useLocation();
  if (session === null) {
    const from = `${location.pathname}${location.search}`;
    return <Navigate to="/sign-in" replace state={{ from } satisfies ReturnTo} />;
  }
  return <Shell session={session} />;
}

/** Sign-in pages: once signed in, on to the page that sent the person here. */
function SignedOut({ children }: { children: ReactNode }) {
  const { session } = useSession();
  const location = useLocation();
  if (session !== null) {
    const from = (location.state as ReturnTo | null)?.from;
    return <Navigate to={from?.startsWith('/') === true ? from : '/servers'} replace />;
  }
  return children;
}

export function App() {
  return (
    <Routes>
      <Route
        path="/sign-in"
        element={
          <SignedOut>
            <SignInPage mode="login" />
          </SignedOut>
        }
      />
      <Route
        path="/register"
        element={
          <SignedOut>
            <SignInPage mode="register" />
          </SignedOut>
        }
      />
      {/* Signed in or not: the link's account is signed in once its password is set. */}
      <Route
        path="/set-password"
        element={
          <Suspense fallback={loading}>
            <SetPasswordPage />
          </Suspense>
        }
      />
      <Route element={<SignedIn />}>
        <Route index element={<Navigate to="/servers" replace />} />
        <Route path="/servers" element={<ServersPage />} />
        <Route
          path="/servers/:name"
          element={
            <Suspense fallback={loading}>
              <ServerPage />
            </Suspense>
          }
        >
          <Route index element={<ConsoleTab />} />
          <Route path="stats" element={<StatsTab />} />
          <Route
            path="files/*"
            element={
              <Allowed permission="files.read" title="Files" what="see the files">
                <FilesTab />
              </Allowed>
            }
          />
          <Route
            path="schedules"
            element={
              <Allowed permission="schedules" title="Schedules" what="see the schedules">
                <SchedulesTab />
              </Allowed>
            }
          />
          <Route
            path="backups"
            element={
              <Allowed permission={BACKUP_PERMISSIONS} title="Backups" what="see the backups">
                <BackupsTab />
              </Allowed>
            }
          />
          <Route
            path="settings"
            element={
              <Allowed permission="settings" title="Settings" what="change the settings">
                <SettingsTab />
              </Allowed>
            }
          />
          <Route
            path="people"
            element={
              <Allowed permission="users" title="People" what="see or invite its people">
                <PeopleTab />
              </Allowed>
            }
          />
        </Route>
        <Route
          path="/tickets"
          element={
            <Suspense fallback={loading}>
              <TicketsPage />
            </Suspense>
          }
        />
        <Route
          path="/tickets/new"
          element={
            <Suspense fallback={loading}>
              <NewTicketPage />
            </Suspense>
          }
        />
        <Route
          path="/tickets/:id"
          element={
            <Suspense fallback={loading}>
              <TicketPage />
            </Suspense>
          }
        />
        <Route
          path="/users"
          element={
            <Suspense fallback={loading}>
              <UsersPage />
            </Suspense>
          }
        />
        <Route
          path="/templates"
          element={
            <Suspense fallback={loading}>
              <TemplatesPage />
            </Suspense>
          }
        />
        <Route
          path="/nodes"
          element={
            <Suspense fallback={loading}>
              <NodesPage />
            </Suspense>
          }
        />
        <Route
          path="/audit"
          element={
            <Suspense fallback={loading}>
              <AuditPage />
            </Suspense>
          }
        />
        <Route
          path="/settings"
          element={
            <Suspense fallback={loading}>
              <SettingsPage />
            </Suspense>
          }
        />
        <Route
          path="/webhooks"
          element={
            <Suspense fallback={loading}>
              <WebhooksPage />
            </Suspense>
          }
        />
        <Route
          path="/profile"
          element={
            <Suspense fallback={loading}>
              <ProfilePage />
            </Suspense>
          }
        />
        <Route path="*" element={<NotFoundPage />} />
      </Route>
    </Routes>
  );
}
