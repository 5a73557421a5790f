import { Type } from 'typebox';
import { SERVER_PERMISSIONS } from '../../domain/policy.js';
import { Envelope, Username } from '../../http/schemas.js';

const Server = Type.String({ minLength: 1, maxLength: 256 });

export const ServerUsersParams = Type.Object({ server: Server });
export const ServerUserParams = Type.Object({ server: Server, username: Username });

const Permission = Type.Union(SERVER_PERMISSIONS.map((permission) => Type.Literal(permission)));

export const PermissionsBody = Type.Object(
  {
    permissions: Type.Array(Permission, {
      uniqueItems: true,
      maxItems: SERVER_PERMISSIONS.length,
      description:
        'Exactly what the user may do on the server; [] lets them see it (its configuration and statistics) and nothing more',
    }),
  },
  { additionalProperties: false },
);

export const ServerPersonSchema = Type.Object({
  username: Type.String(),
  role: Type.String(),
  permissions: Type.Array(Permission),
  owner: Type.Boolean({
    description:
      'Whether they own the server: they hold every permission, and only an admin changes them',
  }),
});

/** An invite's answer: the name as sent and the grant as asked, whoever the name turned out to be. */
export const InvitedSchema = Type.Object({
  username: Type.String(),
  permissions: Type.Array(Permission),
  owner: Type.Boolean(),
});

export const InvitedEnvelope = Envelope(InvitedSchema);

export const OwnerBody = Type.Object(
  {
    owner: Type.Union([Username, Type.Null()], {
      description: 'The username of the new owner, or null for none',
    }),
  },
  { additionalProperties: false },
);

export const OwnerEnvelope = Envelope(
  Type.Object({ owner: Type.Union([Type.String(), Type.Null()]) }),
);
export const ServerPeopleEnvelope = Envelope(Type.Array(ServerPersonSchema));
export const ServerPersonRemovedEnvelope = Envelope(Type.Object({ username: Type.String() }));
