import { Type } from 'typebox';
import { AUDIT_OUTCOMES, AUDIT_VIAS, type AuditFilter } from '../../domain/audit.js';
import { currentUser } from '../../http/access.js';
import { Envelope, Nullable, responses } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import type { AuditService } from './audit.service.js';

const TAGS = ['audit'];

const AuditEntry = Type.Object({
  id: Type.Integer(),
  at: Type.String({ format: 'date-time' }),
  actor: Nullable(Type.String({ description: 'The username at the time' })),
  actorId: Nullable(Type.Integer()),
  via: Type.Union(AUDIT_VIAS.map((via) => Type.Literal(via))),
  viaName: Nullable(
    Type.String({
      description:
        "The API key's or the schedule's name; an API key's is null in a server's log unless the caller may read the whole log (admin)",
    }),
  ),
  address: Nullable(
    Type.String({
      description:
        "Where the request came from; null in a server's log unless the caller may read the whole log (admin)",
    }),
  ),
  action: Type.String({ description: 'A dotted name: server.start, file.write, auth.login…' }),
  server: Nullable(Type.String()),
  serverId: Nullable(
    Type.Integer({
      description:
        'The id of the server so named when the entry was written: a server made again under an old name has another',
    }),
  ),
  target: Nullable(Type.String()),
  outcome: Type.Union(AUDIT_OUTCOMES.map((outcome) => Type.Literal(outcome))),
  status: Nullable(Type.Integer()),
  details: Type.Record(Type.String(), Type.Unknown()),
});

const filterFields = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000_000, default: 0 })),
  actor: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  action: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 100,
      description: 'Exact, or every action under a prefix ending with a dot (`file.`)',
    }),
  ),
  via: Type.Optional(Type.Union(AUDIT_VIAS.map((via) => Type.Literal(via)))),
  outcome: Type.Optional(Type.Union(AUDIT_OUTCOMES.map((outcome) => Type.Literal(outcome)))),
  since: Type.Optional(Type.String({ format: 'date-time', description: 'From this time on' })),
  until: Type.Optional(Type.String({ format: 'date-time', description: 'Before this time' })),
};
const AdminQuery = Type.Object(
  { ...filterFields, server: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })) },
  { additionalProperties: false },
);
const ServerQuery = Type.Object(filterFields, { additionalProperties: false });
const Page = Envelope(Type.Array(AuditEntry));
const DESCRIPTION =
  'Newest first. Paginated with limit (1-200, default 50) and offset; X-Total-Count holds the number of matching entries.';

/** Times are compared as text (ISO-8601 UTC): a time sent with an offset is turned to UTC. */
const utc = (time: string | undefined): string | undefined =>
  time === undefined ? undefined : new Date(time).toISOString();

function filterOf(
  query: Omit<AuditFilter, 'since' | 'until'> & { since?: string; until?: string },
) {
  return {
    actor: query.actor,
    server: query.server,
    action: query.action,
    via: query.via,
    outcome: query.outcome,
    since: utc(query.since),
    until: utc(query.until),
  };
}

/** The audit log: all of it for admins, a server's for holders of its `settings`. */
export function auditRoutes(app: App, audit: AuditService): void {
  app.get(
    '/api/audit',
    {
      config: { access: { action: 'audit.read' } },
      schema: {
        tags: TAGS,
        summary: 'The audit log: every change, who made it, from where and through what (admin)',
        description: DESCRIPTION,
        querystring: AdminQuery,
        response: responses(Page, 400, 401, 403),
      },
    },
    async (request, reply) => {
      const { limit = 50, offset = 0, ...query } = request.query;
      const page = await audit.page(filterOf(query), limit, offset);
      reply.header('X-Total-Count', String(page.total));
      return { message: 'Audit log', data: page.entries };
    },
  );

  app.get(
    '/api/servers/:server/audit',
    {
      schema: {
        tags: TAGS,
        summary:
          "A server's audit log (the settings permission): its own entries, by its id; addresses and API key names for admins only",
        description: DESCRIPTION,
        params: Type.Object({ server: Type.String({ minLength: 1, maxLength: 256 }) }),
        querystring: ServerQuery,
        response: responses(Page, 400, 401, 403, 404),
      },
    },
    async (request, reply) => {
      const { limit = 50, offset = 0, ...query } = request.query;
      const page = await audit.pageOfServer(
        currentUser(request),
        request.params.server,
        filterOf(query),
        limit,
        offset,
      );
      reply.header('X-Total-Count', String(page.total));
      return { message: 'Audit log', data: page.entries };
    },
  );
}
