/** Failures of an analysis in words a person can act on. */
import { ApiFailure } from '../../lib/api';

export function isUnreachable(err: unknown): boolean {
  return err instanceof ApiFailure && err.unreachable;
}

export function errorText(err: unknown): string {
  if (err instanceof ApiFailure) return err.message;
  if (err instanceof Error) return err.message.replace(/^./, (c) => c.toUpperCase());
  return String(err);
}
