import { useOutletContext } from 'react-router';
import type { ServerStatus } from '../../components/StatusBadge';
import type { Held, Permission } from './permissions';

/** What a server's page hands to the tab it shows. */
export interface ServerOutlet {
  /** The server's name (its folder name, as in the URL). */
  readonly name: string;
  /** Its status as last known (the console's frames, else the polled stats), or null. */
  readonly status: ServerStatus | null;
  /** The console tab reports each status frame here, the freshest word on the status. */
  readonly onStatus: (status: ServerStatus | null) => void;
  /** The caller's permissions on the server, `null` until known. */
  readonly permissions: Held;
}

export const useServerOutlet = (): ServerOutlet => useOutletContext<ServerOutlet>();

/** Whether the caller holds `permission` on the server the page shows (false until known). */
export function useCan(permission: Permission): boolean {
  return useServerOutlet().permissions?.has(permission) === true;
}
