/**
 * One error type for the whole HTTP layer, rendered as `{ error: { code, message, request_id }, detail }` with the status its
 * code implies (shared/api/errors.ts). Anything else thrown is a bug: logged, answered with a 500 that says
 * nothing internal.
 */
import type { Context } from 'hono';
import type { ErrorBody } from '../../shared/api/common.js';
import { ERROR_CODES, type ErrorCode } from '../../shared/api/errors.js';

export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.status = ERROR_CODES[code];
  }
}

export function errorBody(code: ErrorCode, message: string, details?: unknown, requestId?: string): ErrorBody {
  const error: ErrorBody['error'] = details === undefined ? { code, message } : { code, message, details };
  if (requestId) error.request_id = requestId;
  // `detail` is what the original service's FastAPI answers carried: its clients show it to people.
  return { error, detail: message };
}

/** The error answer, with the request's id (X-Request-Id) when the request context assigned one. */
export function sendError(c: Context, err: ApiError): Response {
  return c.json(errorBody(err.code, err.message, err.details, c.get('requestId')), err.status as 400);
}

/** The 500 answer to a bug (the error itself is logged, never sent). */
export function sendInternalError(c: Context): Response {
  return c.json(
    errorBody('internal_error', 'the server failed to handle this request; it has been logged', undefined, c.get('requestId')),
    500,
  );
}
