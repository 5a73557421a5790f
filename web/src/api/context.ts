import { createContext, useContext } from 'react';
import type { SessionStore } from '../session/store';
import type { Api } from './client';

export interface Services {
  readonly api: Api;
  readonly sessions: SessionStore;
}

export const ServicesContext = createContext<Services | null>(null);

/** The API client and the session store of the app (given by `main.tsx`, or by a test). */
export function useServices(): Services {
  const services = useContext(ServicesContext);
  if (services === null) throw new Error('useServices outside of <ServicesContext>');
  return services;
}
