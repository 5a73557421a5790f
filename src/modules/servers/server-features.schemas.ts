import { Type } from 'typebox';
import { Envelope, Nullable } from '../../http/schemas.js';

export const ImageBody = Type.Object(
  {
    image: Type.String({
      minLength: 1,
      maxLength: 255,
      description: "One of the images of the server's template (`images[].image`)",
    }),
  },
  { additionalProperties: false },
);

export const ImageChoiceEnvelope = Envelope(
  Type.Object({
    runtime: Type.Union([Type.Literal('process'), Type.Literal('docker')]),
    image: Nullable(Type.String()),
    images: Type.Array(Type.Object({ name: Type.String(), image: Type.String() }), {
      description: "The template's images, by display name, its default first",
    }),
    choosable: Type.Boolean({
      description: 'Whether the caller may choose one of `images` now (PUT …/image)',
    }),
    reason: Nullable(Type.String({ description: 'Why not, when they may not' })),
  }),
);
