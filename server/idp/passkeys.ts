/**
 * Passkeys (WebAuthn) as a second factor beside the face: the users' credentials in `IDP_DATA_DIR/passkeys.json`
 * and the two ceremonies, verified by @simplewebauthn/server.
 *
 * - The relying party is the issuer: rpID its host name, the origin its origin (a browser refuses an IP address as
 *   rpID, so passkeys are offered only when the issuer has a host name).
 * - Challenges are made per page and kept in the sign-in's flow state (interactions.ts), which takes each one
 *   out before checking it: single-use and bound to that interaction.
 * - Credentials are keyed by user id (a later account reusing a username starts with none), written under a lock
 *   with an atomic replace; the signature counter is compared and advanced under that lock.
 * - Everything fails closed: a response that does not parse, a wrong origin, rpID, challenge or type, a bad
 *   signature, a credential not this user's, a counter that went back, a store that cannot be read: denied.
 */
import fs from 'node:fs/promises';
import { isIP } from 'node:net';
import path from 'node:path';
import {
  type AuthenticationResponseJSON,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from '@simplewebauthn/server';
import { z } from 'zod';
import { FileLock } from '../storage/file-lock.js';
import { writePrivateFileAtomic } from './private-file.js';
import type { User } from './users.js';

/** Realm policy (IDP_PASSKEYS): not offered; password + face or password + passkey; password + passkey only. */
export type PasskeyPolicy = 'off' | 'alternative' | 'required';

export interface StoredPasskey {
  /** Credential id, base64url. */
  id: string;
  /** COSE public key, base64url. */
  publicKey: string;
  counter: number;
  transports: string[];
  createdAt: string;
  lastUsedAt: string | null;
}

export interface UserPasskeys {
  /** Per-user policy set by an administrator: this user signs in with a passkey only. */
  required: boolean;
  credentials: StoredPasskey[];
}

const StoredPasskeySchema = z.object({
  id: z.string().min(1),
  publicKey: z.string().min(1),
  counter: z.number().int().min(0),
  transports: z.array(z.string()),
  createdAt: z.string(),
  lastUsedAt: z.string().nullable(),
});
const PasskeysFileSchema = z.object({
  version: z.literal(1),
  users: z.record(z.string(), z.object({ required: z.boolean(), credentials: z.array(StoredPasskeySchema) })),
});
type PasskeysFile = z.infer<typeof PasskeysFileSchema>;

export class PasskeyError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'PasskeyError';
  }
}

const NONE: UserPasskeys = { required: false, credentials: [] };

function recordOf(file: PasskeysFile, userId: string): UserPasskeys {
  if (!Object.hasOwn(file.users, userId)) file.users[userId] = { required: false, credentials: [] };
  return file.users[userId];
}

export class PasskeyStore {
  private readonly file: string;
  private readonly lock: FileLock;

  constructor(dataDir: string) {
    this.file = path.join(dataDir, 'passkeys.json');
    this.lock = new FileLock(path.join(dataDir, 'passkeys.lock'), { staleMs: 30_000 });
  }

  async forUser(userId: string): Promise<UserPasskeys> {
    const { users } = await this.read();
    return structuredClone(Object.hasOwn(users, userId) ? users[userId] : NONE);
  }

  /** Adds a credential; refused when its id is registered already (to anyone). */
  async add(userId: string, passkey: StoredPasskey): Promise<void> {
    await this.change((file) => {
      for (const record of Object.values(file.users))
        if (record.credentials.some((c) => c.id === passkey.id))
          throw new PasskeyError('passkey_exists', 'This passkey is registered already.');
      recordOf(file, userId).credentials.push(passkey);
    });
  }

  /**
   * Records a use: the counter must still be the one the signature was checked against (`seen`), so two uses of
   * one response racing each other cannot both pass. A counter of 0 on both sides: the authenticator keeps none.
   */
  async recordUse(userId: string, id: string, seen: number, next: number): Promise<void> {
    await this.change((file) => {
      const credential = file.users[userId]?.credentials.find((c) => c.id === id);
      if (!credential) throw new PasskeyError('unknown_passkey', 'This passkey is not registered for this user.');
      if (credential.counter !== seen || (next !== 0 && next <= seen))
        throw new PasskeyError('passkey_counter', 'This passkey answered with a counter already seen: it may be cloned.');
      credential.counter = next;
      credential.lastUsedAt = new Date().toISOString();
    });
  }

  /** Recovery by an administrator: every passkey of the user removed. The number removed. */
  async removeAll(userId: string): Promise<number> {
    return this.change((file) => {
      const record = file.users[userId];
      const count = record?.credentials.length ?? 0;
      if (record) record.credentials = [];
      return count;
    });
  }

  /** A removed user: their record (passkeys and policy) goes with them. The number of passkeys removed. */
  async forget(userId: string): Promise<number> {
    return this.change((file) => {
      const count = file.users[userId]?.credentials.length ?? 0;
      delete file.users[userId];
      return count;
    });
  }

  async setRequired(userId: string, required: boolean): Promise<void> {
    await this.change((file) => {
      recordOf(file, userId).required = required;
    });
  }

  private async change<T>(edit: (file: PasskeysFile) => T): Promise<T> {
    await fs.mkdir(path.dirname(this.file), { recursive: true });
    return this.lock.run(async () => {
      const file = await this.read();
      const result = edit(file);
      for (const [id, record] of Object.entries(file.users)) if (!record.required && record.credentials.length === 0) delete file.users[id];
      await writePrivateFileAtomic(this.file, `${JSON.stringify(file, null, 2)}\n`);
      return result;
    });
  }

  /** The whole file; a file that is not ours throws (the caller denies), only a missing one reads as empty. */
  private async read(): Promise<PasskeysFile> {
    let text: string;
    try {
      text = await fs.readFile(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, users: {} };
      throw err;
    }
    const parsed = PasskeysFileSchema.safeParse(JSON.parse(text));
    if (!parsed.success) throw new Error(`${this.file}: not a passkeys file of version 1`);
    return parsed.data;
  }
}

export interface RelyingParty {
  /** The issuer's host name. */
  id: string;
  /** The issuer's origin: the only one a response may come from. */
  origin: string;
  name: string;
}

/** The relying party of an issuer, or undefined where browsers refuse passkeys (an IP address). */
export function relyingPartyFor(issuer: string, realm: string): RelyingParty | undefined {
  const url = new URL(issuer);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0) return undefined;
  return { id: host, origin: url.origin, name: realm };
}

/** How long the browser may wait for the authenticator, in ms. */
const CEREMONY_TIMEOUT_MS = 120_000;

export async function registrationOptions(rp: RelyingParty, user: User, existing: StoredPasskey[]) {
  return generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.id,
    userName: user.username,
    userID: new TextEncoder().encode(user.id),
    timeout: CEREMONY_TIMEOUT_MS,
    attestationType: 'none',
    excludeCredentials: existing.map((c) => ({ id: c.id })),
    authenticatorSelection: { residentKey: 'preferred', userVerification: 'required' },
    // ES256 and RS256 (what every platform authenticator offers); EdDSA beside them.
    supportedAlgorithmIDs: [-7, -8, -257],
  });
}

export async function authenticationOptions(rp: RelyingParty, credentials: StoredPasskey[]) {
  return generateAuthenticationOptions({
    rpID: rp.id,
    timeout: CEREMONY_TIMEOUT_MS,
    userVerification: 'required',
    allowCredentials: credentials.map((c) => ({ id: c.id })),
  });
}

/** The browser's answer, as the page posts it (JSON in the form field `response`). */
function parseResponse<T>(text: string): T {
  try {
    const value = JSON.parse(text) as unknown;
    if (value && typeof value === 'object' && typeof (value as { id?: unknown }).id === 'string') return value as T;
  } catch {
    // answered below
  }
  throw new PasskeyError('invalid_passkey_response', 'The passkey answer could not be read.');
}

export type PasskeyDecision = { granted: true; credentialId: string } | { granted: false; code: string; reason: string };

const deny = (code: string, reason: string): PasskeyDecision => ({ granted: false, code, reason });

function denial(err: unknown, fallback: string): PasskeyDecision {
  if (err instanceof PasskeyError) return deny(err.code, err.message);
  return deny('passkey_rejected', fallback);
}

/** Registration: the new credential stored for `user` when the response answers `challenge` from `rp`. */
export async function finishRegistration(o: {
  rp: RelyingParty;
  store: PasskeyStore;
  user: User;
  challenge: string | undefined;
  response: string;
}): Promise<PasskeyDecision> {
  if (!o.challenge) return deny('passkey_challenge', 'This passkey request was used already or has expired. Try again.');
  try {
    const response = parseResponse<RegistrationResponseJSON>(o.response);
    const result = await verifyRegistrationResponse({
      response,
      expectedChallenge: o.challenge,
      expectedOrigin: o.rp.origin,
      expectedRPID: o.rp.id,
      requireUserVerification: true,
    });
    if (!result.verified) return deny('passkey_rejected', 'The passkey could not be verified.');
    const { credential } = result.registrationInfo;
    const now = new Date().toISOString();
    await o.store.add(o.user.id, {
      id: credential.id,
      publicKey: Buffer.from(credential.publicKey).toString('base64url'),
      counter: credential.counter,
      transports: credential.transports ?? [],
      createdAt: now,
      lastUsedAt: null,
    });
    return { granted: true, credentialId: credential.id };
  } catch (err) {
    return denial(err, 'The passkey could not be verified.');
  }
}

/** Authentication: granted only for one of `user`'s own credentials, signing `challenge` for `rp`. */
export async function finishAuthentication(o: {
  rp: RelyingParty;
  store: PasskeyStore;
  user: User;
  challenge: string | undefined;
  response: string;
}): Promise<PasskeyDecision> {
  if (!o.challenge) return deny('passkey_challenge', 'This passkey request was used already or has expired. Try again.');
  try {
    const response = parseResponse<AuthenticationResponseJSON>(o.response);
    const stored = (await o.store.forUser(o.user.id)).credentials.find((c) => c.id === response.id);
    if (!stored) return deny('unknown_passkey', 'This passkey is not registered for this user.');
    const result = await verifyAuthenticationResponse({
      response,
      expectedChallenge: o.challenge,
      expectedOrigin: o.rp.origin,
      expectedRPID: o.rp.id,
      requireUserVerification: true,
      credential: {
        id: stored.id,
        publicKey: new Uint8Array(Buffer.from(stored.publicKey, 'base64url')),
        counter: stored.counter,
      },
    });
    if (!result.verified) return deny('passkey_rejected', 'The passkey could not be verified.');
    await o.store.recordUse(o.user.id, stored.id, stored.counter, result.authenticationInfo.newCounter);
    return { granted: true, credentialId: stored.id };
  } catch (err) {
    return denial(err, 'The passkey could not be verified.');
  }
}
