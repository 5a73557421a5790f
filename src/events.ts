/**
 * Things that happen in one module and matter to another without either importing the other:
 * a user's access changed (role, server list, password, deletion), a server was deleted. The
 * console closes sockets that lost their right at once.
 */
import { EventEmitter } from 'node:events';

interface PanelEventMap {
  /** Re-check everything this user holds open. */
  'access-changed': [userId: number];
  'server-deleted': [name: string];
}

export class PanelEvents extends EventEmitter<PanelEventMap> {}
