import { expect } from 'vitest';
import { MailError } from '../../server/processor/mail/types.js';

/** The MailError a send rejected with (fails the test when it resolved or rejected with something else). */
export async function mailFailure(promise: Promise<unknown>): Promise<MailError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(MailError);
  return err as MailError;
}
