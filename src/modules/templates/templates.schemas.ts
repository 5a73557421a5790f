import { Type } from 'typebox';
import { CONFIG_PARSERS, EGG_FORMATS } from '../../domain/template.js';
import { Envelope, Nullable } from '../../http/schemas.js';

export const TemplateParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 256 }) });

const FormatSchema = Type.Union(
  EGG_FORMATS.map((format) => Type.Literal(format)),
  {
    description: 'The egg format it was imported from',
  },
);

export const TemplateSummarySchema = Type.Object({
  id: Type.String({ description: 'A slug made from the name at import' }),
  name: Type.String(),
  author: Nullable(Type.String()),
  description: Type.String(),
  format: FormatSchema,
  hasInstallScript: Type.Boolean(),
  createdAt: Type.String({ format: 'date-time' }),
});

export const VariableSchema = Type.Object({
  name: Type.String(),
  description: Type.String(),
  envVariable: Type.String({
    description: 'The environment variable and the {{NAME}} placeholder',
  }),
  defaultValue: Type.String(),
  userViewable: Type.Boolean(),
  userEditable: Type.Boolean(),
  rules: Type.Array(Type.String(), {
    description: 'Validation rules as the egg wrote them (docs/templates.md lists those enforced)',
  }),
});

/** The summary's fields but `hasInstallScript`: the whole template shows `install` itself. */
const common = {
  id: TemplateSummarySchema.properties.id,
  name: TemplateSummarySchema.properties.name,
  author: TemplateSummarySchema.properties.author,
  description: TemplateSummarySchema.properties.description,
  format: TemplateSummarySchema.properties.format,
  createdAt: TemplateSummarySchema.properties.createdAt,
};

export const TemplateSchema = Type.Object({
  ...common,
  uuid: Nullable(Type.String()),
  startupCommands: Type.Array(Type.Object({ name: Type.String(), command: Type.String() })),
  stop: Type.Union([
    Type.Object({ type: Type.Literal('command'), command: Type.String() }),
    Type.Object({
      type: Type.Literal('signal'),
      signal: Type.Union([
        Type.Literal('SIGINT'),
        Type.Literal('SIGTERM'),
        Type.Literal('SIGKILL'),
      ]),
    }),
  ]),
  donePatterns: Type.Array(Type.String(), {
    description: 'A console line containing one marks the server running; `regex:` for a regex',
  }),
  configFiles: Type.Array(
    Type.Object({
      file: Type.String(),
      parser: Type.Union(CONFIG_PARSERS.map((parser) => Type.Literal(parser))),
      replace: Type.Array(
        Type.Object({
          match: Type.String(),
          ifValue: Nullable(Type.String()),
          value: Type.String(),
        }),
      ),
    }),
  ),
  install: Type.Union([
    Type.Object({ script: Type.String(), image: Type.String(), entrypoint: Type.String() }),
    Type.Null(),
  ]),
  variables: Type.Array(VariableSchema),
  dockerImages: Type.Array(Type.Object({ name: Type.String(), image: Type.String() })),
  features: Type.Array(Type.String()),
  fileDenylist: Type.Array(Type.String(), {
    description:
      "The egg's `file_denylist`: gitignore lines naming the files only an admin may read or change (403 `FILE_DENIED` for anyone else)",
  }),
  readsConsoleInput: Type.Boolean({
    description:
      'False when the game reads no console input (the egg feature `no_console_input`): commands typed there do nothing',
  }),
  needsPort: Type.Boolean({
    description:
      "A start command or a config file uses the server's port ({{server.build.default.port}}, SERVER_PORT): a server from it needs an allocation",
  }),
  warnings: Type.Array(Type.String(), {
    description: 'What the import noticed and does not enforce (unknown rules…)',
  }),
});

export const TemplateListEnvelope = Envelope(Type.Array(TemplateSummarySchema));
export const TemplateEnvelope = Envelope(TemplateSchema);
export const TemplateDeletedEnvelope = Envelope(Type.Object({ id: Type.String() }));
