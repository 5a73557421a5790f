/**
 * The app's start. The OpenID Connect callback fragment is taken out of the address bar and the
 * history before anything else runs, then the session, the API client and the query cache are
 * made once and handed to the pages.
 */
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { createBrowserRouter, RouterProvider } from 'react-router';
import { App } from './App';
import { createApi } from './api/client';
import { ServicesContext } from './api/context';
import { ApiError } from './api/errors';
import { ME_KEY } from './hooks/useMe';
import { takeCallbackFragment } from './session/session';
import { createSessionStore } from './session/store';
import './styles/global.css';

const callback = takeCallbackFragment(window);
const sessions = createSessionStore(window.localStorage, window);
if (callback?.kind === 'signed-in') sessions.signIn(callback.session);
if (callback?.kind === 'failed') sessions.setNotice(callback.message);

const queries = new QueryClient({
  defaultOptions: {
    queries: {
      // A refusal (4xx) will not change by asking again; a failure on the way might.
      retry: (failures, error) =>
        !(error instanceof ApiError && error.status < 500) && failures < 2,
    },
  },
});
const api = createApi(sessions, {
  onBanned: () => void queries.invalidateQueries({ queryKey: ME_KEY }),
});
sessions.subscribe(() => {
  if (sessions.getSnapshot().session === null) queries.clear();
});

// A data router, so a page can hold back navigation while it has unsaved changes (`useBlocker`:
// the file editor, the server settings); the routes themselves stay in <App>'s <Routes>.
const router = createBrowserRouter([{ path: '*', element: <App /> }]);

const root = document.getElementById('root');
if (root === null) throw new Error('index.html has no #root');
createRoot(root).render(
  <StrictMode>
    <ServicesContext value={{ api, sessions }}>
      <QueryClientProvider client={queries}>
        <RouterProvider router={router} />
      </QueryClientProvider>
    </ServicesContext>
  </StrictMode>,
);
