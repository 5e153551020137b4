/**
 * The identity provider's users, in `IDP_DATA_DIR/users.json`. The running IdP and the `users` CLI share the
 * file: every change is a read-modify-write under a lock file (server/storage/file-lock.ts) and an atomic
 * replace, and readers reload it when its modification time changes, so a user added by the CLI can sign in at
 * once without a restart.
 *
 * Usernames are lower-case letters, digits, `.`, `_` and `-`: the username is the label the user's face is
 * enrolled under (`POST /api/images`), and the API normalises labels to lower case, so this keeps the two equal.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { writePrivateFileAtomic } from './private-file.js';
import { FileLock } from '../storage/file-lock.js';
import { DUMMY_HASH, hashPassword, passwordProblem, verifyPassword } from './passwords.js';

export const ROLE_USER = 'biometric-user';
export const ROLE_ADMIN = 'biometric-admin';
/** Kiosks and devices that recognise offline: they may download the trained models (everyone's templates). */
export const ROLE_DEVICE = 'biometric-device';
export const GROUP_ENROLLED = 'biometric-enrolled';
export const ATTRIBUTE_ENROLLED = 'biometric_enrolled';
/**
 * When the enrollment began (ISO 8601; the first upload): a deletion of the user's label by the API at or after it
 * (`GET /api/deletions`) removed this enrollment's face data, and the user is marked not enrolled (enrollment-sync.ts).
 */
export const ATTRIBUTE_ENROLLED_AT = 'biometric_enrolled_at';
/** Keycloak's required actions, by the names the spec gives them. */
export const ACTION_UPDATE_PASSWORD = 'UPDATE_PASSWORD';
export const ACTION_BIOMETRIC_ENROLLMENT = 'biometric-enrollment';

export const USERNAME = /^[a-z0-9][a-z0-9._-]{0,62}$/;
/**
 * #35 item 3: what Keycloak calls a client's client-credentials account (`service-account-<client>`). No user may
 * take such a name (compared after normalisation, so in any case): wherever a name is read instead of the token's
 * grant, it would pass as a client.
 */
export const SERVICE_ACCOUNT_PREFIX = 'service-account-';

export interface User {
  id: string;
  username: string;
  passwordHash: string;
  /** Set by an administrator: must be changed at the next sign-in (required action UPDATE_PASSWORD). */
  requiredActions: string[];
  roles: string[];
  groups: string[];
  attributes: Record<string, string>;
  createdAt: string;
  updatedAt: string;
}

interface UsersFile {
  version: 1;
  users: User[];
}

export class UserError extends Error {
  constructor(
    readonly code: 'invalid_username' | 'invalid_password' | 'user_exists' | 'user_not_found' | 'last_admin',
    message: string,
  ) {
    super(message);
    this.name = 'UserError';
  }
}

export function normaliseUsername(name: string): string {
  return name.normalize('NFC').trim().toLowerCase();
}

export function isEnrolled(user: User): boolean {
  return user.attributes[ATTRIBUTE_ENROLLED] === 'true';
}

/** When the user's enrollment began; an enrollment from before the attribute counts from the user's creation. */
export function enrolledAt(user: User): string {
  return user.attributes[ATTRIBUTE_ENROLLED_AT] ?? user.createdAt;
}

export class UserStore {
  private readonly file: string;
  private readonly lock: FileLock;
  private cache: { mtimeMs: number; users: User[] } | null = null;

  constructor(dataDir: string) {
    this.file = path.join(dataDir, 'users.json');
    this.lock = new FileLock(path.join(dataDir, 'users.lock'), { staleMs: 30_000 });
  }

  async list(): Promise<User[]> {
    return (await this.read()).map((u) => structuredClone(u));
  }

  async byUsername(name: string): Promise<User | undefined> {
    const username = normaliseUsername(name);
    const user = (await this.read()).find((u) => u.username === username);
    return user && structuredClone(user);
  }

  async byId(id: string): Promise<User | undefined> {
    const user = (await this.read()).find((u) => u.id === id);
    return user && structuredClone(user);
  }

  /** The user when name and password match; undefined otherwise (unknown names cost as much as wrong passwords). */
  async authenticate(name: string, password: string): Promise<User | undefined> {
    const user = await this.byUsername(name);
    const ok = await verifyPassword(password, user?.passwordHash ?? DUMMY_HASH);
    return ok && user ? user : undefined;
  }

  /**
   * Creates a user with a temporary password. Every new user must change it and enrol their face at first
   * sign-in (required actions UPDATE_PASSWORD and biometric-enrollment), unless `temporary` is false (the bootstrap
   * administrator, whose password the operator chose).
   */
  async add(name: string, password: string, opts: { admin?: boolean; device?: boolean; temporary?: boolean } = {}): Promise<User> {
    const username = normaliseUsername(name);
    if (!USERNAME.test(username))
      throw new UserError(
        'invalid_username',
        'a username is 1 to 63 lower-case letters, digits, ".", "_" or "-", starting with a letter or digit',
      );
    if (username.startsWith(SERVICE_ACCOUNT_PREFIX))
      throw new UserError(
        'invalid_username',
        `a username may not start with "${SERVICE_ACCOUNT_PREFIX}": that is how client (service) accounts are named`,
      );
    const problem = passwordProblem(password);
    if (problem) throw new UserError('invalid_password', problem);
    const passwordHash = await hashPassword(password);
    return this.change((users) => {
      if (users.some((u) => u.username === username)) throw new UserError('user_exists', `a user named ${username} exists already`);
      const now = new Date().toISOString();
      const user: User = {
        id: randomUUID(),
        username,
        passwordHash,
        requiredActions: [...(opts.temporary === false ? [] : [ACTION_UPDATE_PASSWORD]), ACTION_BIOMETRIC_ENROLLMENT],
        roles: [ROLE_USER, ...(opts.admin ? [ROLE_ADMIN] : []), ...(opts.device ? [ROLE_DEVICE] : [])],
        groups: [],
        attributes: { [ATTRIBUTE_ENROLLED]: 'false' },
        createdAt: now,
        updatedAt: now,
      };
      users.push(user);
      return user;
    });
  }

  /**
   * Removes a user, checking and acting as one critical section under the users' lock (#35 item 2): `check` (the
   * caller's own conditions, on the users as stored now) and the last-administrator check may refuse; only when all
   * passed does `before` run (the deletion of the user's face data on the API), and the user goes right after it. So
   * a refused removal has changed nothing, and two administrators removing each other at once cannot leave none,
   * nor lose the survivor's face. A `before` that throws keeps the user as they were.
   */
  async remove(
    name: string,
    opts: { check?: (target: User, users: readonly User[]) => void; before?: (target: User) => Promise<void> } = {},
  ): Promise<User> {
    const username = normaliseUsername(name);
    return this.change(async (users) => {
      const at = users.findIndex((u) => u.username === username);
      if (at < 0) throw new UserError('user_not_found', `no user named ${username}`);
      opts.check?.(structuredClone(users[at]), structuredClone(users));
      if (users[at].roles.includes(ROLE_ADMIN) && !users.some((u, i) => i !== at && u.roles.includes(ROLE_ADMIN)))
        throw new UserError('last_admin', `${username} is the last administrator; make another administrator first`);
      await opts.before?.(structuredClone(users[at]));
      return users.splice(at, 1)[0];
    });
  }

  /** A new password chosen by the user: clears UPDATE_PASSWORD. */
  async setPassword(id: string, password: string): Promise<User> {
    const problem = passwordProblem(password);
    if (problem) throw new UserError('invalid_password', problem);
    const passwordHash = await hashPassword(password);
    return this.update(id, (u) => {
      u.passwordHash = passwordHash;
      u.requiredActions = u.requiredActions.filter((a) => a !== ACTION_UPDATE_PASSWORD);
    });
  }

  /**
   * Enrollment completed: attribute biometric_enrolled=true, biometric_enrolled_at=`since` (when it began; default
   * now), group biometric-enrolled, required action cleared.
   */
  async markEnrolled(id: string, since: Date = new Date()): Promise<User> {
    return this.update(id, (u) => {
      u.attributes[ATTRIBUTE_ENROLLED] = 'true';
      u.attributes[ATTRIBUTE_ENROLLED_AT] = since.toISOString();
      if (!u.groups.includes(GROUP_ENROLLED)) u.groups.push(GROUP_ENROLLED);
      u.requiredActions = u.requiredActions.filter((a) => a !== ACTION_BIOMETRIC_ENROLLMENT);
    });
  }

  /**
   * The API no longer holds the user's face data (their label was deleted): biometric_enrolled=false, the group
   * left, and the enrollment required action set again, so the next sign-in enrolls. Only while the enrollment is
   * still the one checked (`enrolledSince`): one made meanwhile is kept. Undefined when the user is gone.
   */
  async markNotEnrolled(id: string, enrolledSince?: string): Promise<User | undefined> {
    try {
      return await this.update(id, (u) => {
        if (enrolledSince !== undefined && isEnrolled(u) && enrolledAt(u) !== enrolledSince) return;
        u.attributes[ATTRIBUTE_ENROLLED] = 'false';
        delete u.attributes[ATTRIBUTE_ENROLLED_AT];
        u.groups = u.groups.filter((g) => g !== GROUP_ENROLLED);
        if (!u.requiredActions.includes(ACTION_BIOMETRIC_ENROLLMENT)) u.requiredActions.push(ACTION_BIOMETRIC_ENROLLMENT);
      });
    } catch (err) {
      if (err instanceof UserError && err.code === 'user_not_found') return undefined;
      throw err;
    }
  }

  private async update(id: string, edit: (user: User) => void): Promise<User> {
    return this.change((users) => {
      const user = users.find((u) => u.id === id);
      if (!user) throw new UserError('user_not_found', 'the user no longer exists');
      edit(user);
      user.updatedAt = new Date().toISOString();
      return user;
    });
  }

  /** Read-modify-write under the lock, always on the file's current content (another process may have changed it). */
  private async change<T extends User>(edit: (users: User[]) => T | Promise<T>): Promise<T> {
    await fs.mkdir(path.dirname(this.file), { recursive: true });
    return this.lock.run(async () => {
      this.cache = null;
      // A copy: an edit that throws half-way (or awaits) leaves the cached users as stored.
      const users = structuredClone(await this.read());
      const result = await edit(users);
      const body: UsersFile = { version: 1, users };
      await writePrivateFileAtomic(this.file, `${JSON.stringify(body, null, 2)}\n`);
      this.cache = null;
      return structuredClone(result);
    });
  }

  private async read(): Promise<User[]> {
    let mtimeMs: number;
    try {
      mtimeMs = (await fs.stat(this.file)).mtimeMs;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    if (this.cache?.mtimeMs === mtimeMs) return this.cache.users;
    const parsed = JSON.parse(await fs.readFile(this.file, 'utf8')) as UsersFile;
    if (parsed.version !== 1 || !Array.isArray(parsed.users)) throw new Error(`${this.file}: not a users file of version 1`);
    this.cache = { mtimeMs, users: parsed.users };
    return parsed.users;
  }
}
