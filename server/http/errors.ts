/**
 * One error type for the whole HTTP layer, rendered as `{ error: { code, message } }` with the status its
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

export function errorBody(code: ErrorCode, message: string, details?: unknown): ErrorBody {
  return details === undefined ? { error: { code, message } } : { error: { code, message, details } };
}

export function sendError(c: Context, err: ApiError): Response {
  return c.json(errorBody(err.code, err.message, err.details), err.status as 400);
}
