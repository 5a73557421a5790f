import { Type } from 'typebox';
import { Envelope, Nullable, responses } from '../../http/schemas.js';
import type { App } from '../../http/types.js';

/** Where the panel's SFTP server listens, and the fingerprint of its host key. */
export interface SftpInfo {
  /** null: SFTP is off (SFTP_PORT=0) or not running. */
  info(): { readonly port: number; readonly fingerprint: string } | null;
}

const SftpEnvelope = Envelope(
  Type.Object({
    enabled: Type.Boolean(),
    port: Nullable(Type.Integer({ minimum: 1, maximum: 65_535 })),
    hostKeyFingerprint: Nullable(
      Type.String({
        description:
          "`SHA256:…` of the server's host key: what an SFTP client asks to trust the first time",
      }),
    ),
  }),
);

/**
 * How to reach the panel's SFTP server (docs/sftp.md), for any signed-in user: the UI shows the
 * address to connect to and the fingerprint to check. The host name is the one the browser used.
 */
export function sftpRoutes(app: App, sftp: SftpInfo): void {
  app.get(
    '/api/sftp',
    {
      schema: {
        tags: ['sftp'],
        summary: "Whether SFTP is on, its port and its host key's fingerprint",
        response: responses(SftpEnvelope, 401, 403),
      },
    },
    () => {
      const info = sftp.info();
      return {
        message: 'SFTP',
        data:
          info === null
            ? { enabled: false, port: null, hostKeyFingerprint: null }
            : { enabled: true, port: info.port, hostKeyFingerprint: info.fingerprint },
      };
    },
  );
}
