import { currentUser } from '../../http/access.js';
import { responses } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import {
  MaybeTransferEnvelope,
  TransferBody,
  TransferEnvelope,
  TransferParams,
} from './transfers.schemas.js';
import type { TransfersService } from './transfers.service.js';

const TAGS = ['servers'];

export function transfersRoutes(app: App, transfers: TransfersService): void {
  app.get(
    '/api/servers/:server/transfer',
    {
      config: { polled: true },
      schema: {
        tags: TAGS,
        summary: "The server's last transfer to another node, with its progress while it runs",
        params: TransferParams,
        response: responses(MaybeTransferEnvelope, 401, 403, 404),
      },
    },
    async (request) => ({
      message: 'Transfer',
      data: await transfers.get(currentUser(request), request.params.server),
    }),
  );

  app.post(
    '/api/servers/:server/transfer',
    {
      schema: {
        tags: TAGS,
        summary: 'Transfer the server to another node (admin); answers once it has begun',
        description:
          "Checked first, nothing touched on a refusal: the node must exist (400), not be the server's own (409 CONFLICT), not be in maintenance (409 NODE_MAINTENANCE), have the memory left (409 NODE_FULL) and answer (503 NODE_UNREACHABLE); the server's addresses and ports must be free there (409 ALLOCATION_TAKEN naming one); one transfer at a time (409 TRANSFER_IN_PROGRESS); not while its install runs (409). Then, in the background: a running server is stopped (its stop sequence) and started again on the new node at the end; the server is held stopped meanwhile (a start gets 409 BACKUP_IN_PROGRESS saying why); its folder is packed on the old node through the panel, checked (SHA-256 of the archive, then the files, entries and bytes of the copy on the new node against what was packed) and switched in one step. `status` is `running` until `done`, `failed` or `cancelled`, with `progress` meanwhile and `transfer` frames on the console socket. Until the switch, a failure leaves the server on its old node, whole, with nothing left on the new one. The old copy is removed once the server has started on its new node.",
        params: TransferParams,
        body: TransferBody,
        response: responses(TransferEnvelope, 400, 401, 403, 404, 409, 503),
      },
    },
    async (request) => ({
      message: 'Transfer started',
      data: await transfers.start(currentUser(request), request.params.server, request.body.node),
    }),
  );

  app.delete(
    '/api/servers/:server/transfer',
    {
      schema: {
        tags: TAGS,
        summary: "Cancel the server's transfer (admin); answers once it is rolled back",
        description:
          'What was made on the new node is removed and the server stays on its old node, released (`status` `cancelled`). 409 when no transfer is under way, or once it has switched.',
        params: TransferParams,
        response: responses(TransferEnvelope, 401, 403, 404, 409),
      },
    },
    async (request) => ({
      message: 'Transfer cancelled',
      data: await transfers.cancel(currentUser(request), request.params.server),
    }),
  );
}
