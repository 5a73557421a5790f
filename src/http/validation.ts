/**
 * How requests are validated. Bodies strictly: no type coercion, unknown fields refused, no
 * defaults filled in silently. Query strings and path parameters are text on the wire, so they
 * may be coerced (and take their defaults). Validators are compiled on first use (LazySchemas).
 * Every body this API takes is JSON (uploads arrive with the file manager): text is refused (415).
 */
import { Ajv, type Options as AjvOptions } from 'ajv';
import addFormats from 'ajv-formats';
import type { LazySchemas } from './lazy-schemas.js';
import { ErrorBody } from './schemas.js';
import type { App } from './types.js';

/** Sets the validator compilers, refuses text bodies and adds the shared error schema. */
export function registerValidation(app: App, schemas: LazySchemas): void {
  setValidators(app, schemas);
  app.removeContentTypeParser('text/plain');
  app.addSchema(ErrorBody);
}

function setValidators(app: App, schemas: LazySchemas): void {
  const common: AjvOptions = { allErrors: false, strict: false, removeAdditional: false };
  const body = addFormats.default(new Ajv({ ...common, coerceTypes: false, useDefaults: false }));
  const other = addFormats.default(new Ajv({ ...common, coerceTypes: 'array', useDefaults: true }));
  for (const ajv of [body, other]) ajv.addSchema(ErrorBody);
  app.setValidatorCompiler(({ schema, httpPart }) =>
    schemas.lazy(() => (httpPart === 'body' ? body : other).compile(schema)),
  );
}
