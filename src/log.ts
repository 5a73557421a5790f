/**
 * What the panel's parts log through: the panel's logger (pino, through Fastify) fits it, and a
 * part made without one logs nothing. Details first, then the message, as pino takes them.
 */
export interface Logger {
  debug(details: object, message: string): void;
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

export const SILENT_LOGGER: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};
