/**
 * The IdP's link to a user's face data, kept in step with the API's deletions (#26): `DELETE /api/images/{label}`
 * removes a person everywhere and the API lists the deletion (`GET /api/deletions`). A user whose label (the
 * username) was deleted at or after their enrollment began (attribute `biometric_enrolled_at`) is marked not
 * enrolled: attribute `biometric_enrolled=false`, group `biometric-enrolled` left, required action
 * `biometric-enrollment` set again, so the next sign-in enrolls the face afresh.
 *
 * Checked after the password (interactions.ts: the sign-in goes to enrollment), before the face step's decision
 * (face-verifier.ts) and before the admin user list (admin-api.ts). It fails closed: `checkUser` throws the
 * BackendError of an API that cannot answer, and the face step denies with it; more deletions since the enrollment
 * than one page holds (so the user's own cannot be ruled out) count as a deletion.
 */
import { normalizeLabel } from '../../shared/api/labels.js';
import type { DeletedPerson } from '../../shared/api/deletions.js';
import type { Logger } from '../logger.js';
import { type Backend, BackendError } from './backend.js';
import { enrolledAt, isEnrolled, type User, type UserStore } from './users.js';

/** Deletions asked for at once (the API's most). */
export const DELETIONS_PAGE = 1000;

/** What the face step says when the user's face data is gone from the API. */
export const ENROLLMENT_REMOVED_REASON =
  'Your face data was removed from the face service, so your face cannot be checked. Sign in again to enroll your face again, or ask an administrator.';

export interface EnrollmentSync {
  /**
   * The user as stored after the check: not enrolled any more when the API deleted their label at or after their
   * enrollment began; undefined when the user is gone. Throws a BackendError when the API cannot answer.
   */
  checkUser(user: User): Promise<User | undefined>;
  /** Every enrolled user checked (one request, more only when it is a full page); how many were marked not enrolled. */
  checkAll(): Promise<number>;
  /** The API holds no face of the user (it answered `not_enrolled`): the link is dropped. */
  drop(user: User, reason: string): Promise<User | undefined>;
}

const labelOf = (user: User): string => {
  const label = normalizeLabel(user.username);
  return label.ok ? label.label : user.username;
};

/** Whether `list` shows the user's label deleted at or after their enrollment began (an unreadable time: yes). */
function deletedSinceEnrollment(list: DeletedPerson[], user: User): boolean {
  const since = Date.parse(enrolledAt(user));
  const label = labelOf(user);
  return list.some((d) => d.label === label && !(Date.parse(d.deleted_at) < since));
}

export function createEnrollmentSync(o: { backend: Backend; users: UserStore; log: Logger }): EnrollmentSync {
  const { backend, users, log } = o;

  async function deletions(since: Date): Promise<{ list: DeletedPerson[]; complete: boolean }> {
    if (!backend.deletions) throw new BackendError('backend_unavailable', 'The face service cannot list its deletions.');
    const list = await backend.deletions(since, DELETIONS_PAGE);
    return { list, complete: list.length < DELETIONS_PAGE };
  }

  async function drop(user: User, reason: string): Promise<User | undefined> {
    const changed = await users.markNotEnrolled(user.id, enrolledAt(user));
    log.info('security event', { event: 'enrollment_removed', username: user.username, reason });
    return changed;
  }

  async function checkUser(user: User): Promise<User | undefined> {
    if (!isEnrolled(user)) return user;
    const since = new Date(enrolledAt(user));
    if (Number.isNaN(since.getTime())) return drop(user, 'enrollment_time_unreadable');
    const { list, complete } = await deletions(since);
    if (deletedSinceEnrollment(list, user)) return drop(user, 'label_deleted');
    if (!complete) return drop(user, 'deletions_not_all_seen');
    return user;
  }

  return {
    checkUser,
    drop,
    async checkAll() {
      const enrolled = (await users.list()).filter(isEnrolled);
      const times = enrolled.map((u) => Date.parse(enrolledAt(u))).filter((t) => !Number.isNaN(t));
      if (enrolled.length === 0) return 0;
      const { list, complete } = await deletions(new Date(times.length ? Math.min(...times) : 0));
      // A full page (newest first) covers back to its oldest entry; users enrolled before that are checked alone.
      const covered = complete ? Number.NEGATIVE_INFINITY : Date.parse(list.at(-1)?.deleted_at ?? '');
      let dropped = 0;
      for (const user of enrolled) {
        const after = deletedSinceEnrollment(list, user)
          ? await drop(user, 'label_deleted')
          : Date.parse(enrolledAt(user)) >= covered
            ? user
            : await checkUser(user);
        if (!after || !isEnrolled(after)) dropped++;
      }
      return dropped;
    },
  };
}

/** The face service could not delete a person's face data: the user is kept, so nothing is lost (503). */
export class FaceDeletionError extends Error {
  constructor(
    message: string,
    /** Training is running on the API (409): a retry in a few seconds works. */
    readonly busy = false,
  ) {
    super(message);
    this.name = 'FaceDeletionError';
  }
}

/**
 * Deletes a removed user's face data on the API (`DELETE /api/images/{label}`: images, templates, sightings), so a
 * later account of the same name starts with no face. Sent with the removing administrator's own access token
 * (audience `<realm>-backend`, role `biometric-admin`), so the API's audit names who deleted it. 200 and 404
 * (nothing stored under the label) both mean the face is gone; anything else throws FaceDeletionError.
 */
export async function deleteFaceData(o: {
  url: string;
  timeoutMs: number;
  username: string;
  authorization: string;
}): Promise<'deleted' | 'none'> {
  const label = normalizeLabel(o.username);
  if (!label.ok) return 'none'; // never a label: nothing can be stored under it
  let res: Response;
  try {
    res = await fetch(`${o.url}/api/images/${encodeURIComponent(label.label)}`, {
      method: 'DELETE',
      headers: { authorization: o.authorization },
      signal: AbortSignal.timeout(o.timeoutMs),
    });
  } catch {
    throw new FaceDeletionError('The face service cannot be reached');
  }
  const body = (await res.json().catch(() => null)) as { error?: { code?: unknown } } | null;
  if (res.ok) return 'deleted';
  if (res.status === 404 && body?.error?.code === 'label_not_found') return 'none';
  if (res.status === 409) throw new FaceDeletionError('The face service is training', true);
  throw new FaceDeletionError(`The face service refused to delete the face data (${res.status})`);
}
