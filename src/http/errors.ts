/**
 * One error handler for the whole API: every failure, Fastify's own included, leaves as
 * `{ message, code, statusCode }` (docs/api.md, contract §2). 5xx details are logged with the
 * request id and never sent.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, type ErrorCode, type ErrorDetail } from '../errors.js';

interface ErrorReply {
  readonly statusCode: number;
  readonly code: ErrorCode;
  readonly message: string;
  readonly details?: readonly ErrorDetail[];
  readonly retryAfter?: number;
}

/** Fastify's own 4xx errors, by their code, with the message a client should see. */
const FASTIFY_ERRORS: Readonly<Record<string, { code: ErrorCode; message?: string }>> = {
  FST_ERR_CTP_BODY_TOO_LARGE: { code: 'PAYLOAD_TOO_LARGE', message: 'Request body is too large' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    code: 'UNSUPPORTED_MEDIA_TYPE',
    message: 'Unsupported Content-Type: bodies are application/json (uploads: multipart/form-data)',
  },
  FST_ERR_CTP_EMPTY_JSON_BODY: { code: 'INVALID_JSON', message: 'Body is empty; send JSON' },
  FST_ERR_CTP_INVALID_JSON_BODY: { code: 'INVALID_JSON', message: 'Body is not valid JSON' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: {
    code: 'VALIDATION_FAILED',
    message: 'Content-Length does not match the body',
  },
  FST_ERR_BAD_URL: { code: 'VALIDATION_FAILED', message: 'Malformed URL' },
};

const GENERIC_BY_STATUS: Readonly<Record<number, ErrorCode>> = {
  400: 'VALIDATION_FAILED',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'RATE_LIMITED',
};

export function toErrorReply(error: unknown): ErrorReply {
  if (error instanceof AppError) {
    return {
      statusCode: error.statusCode,
      code: error.code,
      message: error.message,
      ...(error.options.details ? { details: error.options.details } : {}),
      ...(error.options.retryAfter === undefined ? {} : { retryAfter: error.options.retryAfter }),
    };
  }
  const fastifyError = error as Partial<FastifyError> & { validation?: unknown };
  if (Array.isArray(fastifyError.validation)) {
    const details = validationDetails(
      fastifyError.validation,
      fastifyError.validationContext ?? 'body',
    );
    return {
      statusCode: 400,
      code: 'VALIDATION_FAILED',
      message: details.map((detail) => `${detail.path}: ${detail.message}`).join('; '),
      details,
    };
  }
  const status = fastifyError.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const known = fastifyError.code === undefined ? undefined : FASTIFY_ERRORS[fastifyError.code];
    if (known) return { statusCode: status, code: known.code, message: known.message ?? '' };
    // Invalid JSON and prototype poisoning surface as a SyntaxError with status 400.
    if (error instanceof SyntaxError) {
      return { statusCode: 400, code: 'INVALID_JSON', message: 'Body is not valid JSON' };
    }
    return {
      statusCode: status,
      code: GENERIC_BY_STATUS[status] ?? 'VALIDATION_FAILED',
      message: 'The request was refused',
    };
  }
  return { statusCode: 500, code: 'INTERNAL', message: 'Internal server error' };
}

interface AjvError {
  readonly instancePath: string;
  readonly message?: string;
  readonly keyword: string;
  readonly params: Record<string, unknown>;
}

function validationDetails(errors: readonly AjvError[], context: string): ErrorDetail[] {
  const details = errors.map((error) => {
    const where = `${context}${error.instancePath}`;
    const extra = error.params.additionalProperty;
    if (error.keyword === 'additionalProperties' && typeof extra === 'string') {
      return { path: `${where}/${extra}`, message: 'unknown field' };
    }
    const missing = error.params.missingProperty;
    if (error.keyword === 'required' && typeof missing === 'string') {
      return { path: `${where}/${missing}`, message: 'is required' };
    }
    return { path: where, message: error.message ?? 'is invalid' };
  });
  return errors.some((error) => error.keyword === 'anyOf') ? plainUnions(errors, details) : details;
}

/**
 * A value that matches no branch of a union (`integer or null`, `"process" or "docker"`) gets
 * one error per branch and one for the union: "must be >= 1; must be null; must match a schema
 * in anyOf". Said once instead: "must be >= 1, or null", "must be one of process, docker".
 */
function plainUnions(errors: readonly AjvError[], details: ErrorDetail[]): ErrorDetail[] {
  const unions = new Set(
    errors.filter((error) => error.keyword === 'anyOf').map((error) => error.instancePath),
  );
  const result: ErrorDetail[] = [];
  const constants = new Map<string, string[]>();
  errors.forEach((error, index) => {
    const detail = details[index];
    if (detail === undefined) return;
    if (!unions.has(error.instancePath)) {
      result.push(detail);
      return;
    }
    if (error.keyword === 'anyOf') return;
    if (error.keyword === 'type' && error.params.type === 'null') return;
    if (error.keyword === 'const') {
      const values = constants.get(detail.path) ?? [];
      if (values.length === 0) result.push(detail);
      values.push(String(error.params.allowedValue));
      constants.set(detail.path, values);
      return;
    }
    const nullable = errors.some(
      (other) =>
        other.instancePath === error.instancePath &&
        other.keyword === 'type' &&
        other.params.type === 'null',
    );
    result.push(nullable ? { ...detail, message: `${detail.message}, or null` } : detail);
  });
  return result.map((detail) => {
    const values = constants.get(detail.path);
    return values && detail.message === 'must be equal to constant'
      ? { ...detail, message: `must be one of ${values.join(', ')}` }
      : detail;
  });
}

export function sendError(reply: FastifyReply, error: unknown): FastifyReply {
  const body = toErrorReply(error);
  if (body.retryAfter !== undefined) reply.header('Retry-After', String(body.retryAfter));
  return reply
    .code(body.statusCode)
    .type('application/json; charset=utf-8')
    .send({
      message: body.message,
      code: body.code,
      statusCode: body.statusCode,
      ...(body.details ? { details: body.details } : {}),
    });
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const body = toErrorReply(error);
    if (body.statusCode >= 500) request.log.error({ err: error }, 'request failed');
    else request.log.debug({ code: body.code }, 'request refused');
    return sendError(reply, error);
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?', 1)[0] ?? '';
    return sendError(
      reply,
      new AppError('NOT_FOUND', `Route ${request.method} ${path.slice(0, 200)} not found`),
    );
  });
}
