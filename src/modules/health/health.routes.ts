import { Type } from 'typebox';
import { Envelope, responses } from '../../http/schemas.js';
import type { App } from '../../http/types.js';

const HealthEnvelope = Envelope(
  Type.Object({ status: Type.Literal('ok'), version: Type.String() }),
);

export function healthRoutes(app: App, version: string): void {
  app.get(
    '/api/health',
    {
      // Asked again and again by monitors: its request lines are logged at debug.
      config: { access: 'public', polled: true },
      schema: {
        tags: ['health'],
        summary: 'Liveness check',
        response: responses(HealthEnvelope),
      },
    },
    () => ({ message: 'OK', data: { status: 'ok' as const, version } }),
  );
}
