/**
 * A software WebAuthn authenticator (a test double of a platform authenticator, for Node where no browser runs):
 * one ES256 key pair per credential, real attestation objects (format `none`) and real signatures over
 * authenticatorData and the hash of clientDataJSON, as CTAP2 makes them. It answers the JSON options the IdP's
 * pages carry with the JSON the page script posts, and lets a test bend any part (origin, challenge, key, counter).
 */
import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';

const b64url = (bytes: Uint8Array | Buffer) => Buffer.from(bytes).toString('base64url');

export interface SoftCredential {
  id: Buffer;
  privateKey: KeyObject;
  publicKey: KeyObject;
  counter: number;
}

/** The COSE form (EC2, ES256, P-256) of a public key. */
function coseKey(publicKey: KeyObject): Uint8Array {
  const jwk = publicKey.export({ format: 'jwk' });
  return isoCBOR.encode(
    new Map<number, number | Uint8Array>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, new Uint8Array(Buffer.from(jwk.x!, 'base64url'))],
      [-3, new Uint8Array(Buffer.from(jwk.y!, 'base64url'))],
    ]),
  );
}

function authData(rpId: string, flags: number, counter: number, attested?: Buffer): Buffer {
  const count = Buffer.alloc(4);
  count.writeUInt32BE(counter);
  return Buffer.concat([createHash('sha256').update(rpId).digest(), Buffer.from([flags]), count, attested ?? Buffer.alloc(0)]);
}

const UP = 0x01;
const UV = 0x04;
const AT = 0x40;

export function newCredential(): SoftCredential {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { id: randomBytes(16), privateKey, publicKey, counter: 0 };
}

export interface Bend {
  origin?: string;
  challenge?: string;
  rpId?: string;
  type?: string;
  /** User verification flag (default set). */
  uv?: boolean;
}

/** A registration response to `options` (generateRegistrationOptions' JSON) for a new credential. */
export function register(
  options: { challenge: string; rp: { id?: string } },
  origin: string,
  credential = newCredential(),
  bend: Bend = {},
) {
  const clientDataJSON = Buffer.from(
    JSON.stringify({
      type: bend.type ?? 'webauthn.create',
      challenge: bend.challenge ?? options.challenge,
      origin: bend.origin ?? origin,
      crossOrigin: false,
    }),
  );
  const idLength = Buffer.alloc(2);
  idLength.writeUInt16BE(credential.id.length);
  const attested = Buffer.concat([Buffer.alloc(16), idLength, credential.id, Buffer.from(coseKey(credential.publicKey))]);
  const data = authData(bend.rpId ?? options.rp.id!, UP | (bend.uv === false ? 0 : UV) | AT, credential.counter, attested);
  const attestationObject = isoCBOR.encode(
    new Map<string, unknown>([
      ['fmt', 'none'],
      ['attStmt', new Map()],
      ['authData', new Uint8Array(data)],
    ]) as Parameters<typeof isoCBOR.encode>[0],
  );
  const response = {
    id: b64url(credential.id),
    rawId: b64url(credential.id),
    type: 'public-key',
    clientExtensionResults: {},
    response: { clientDataJSON: b64url(clientDataJSON), attestationObject: b64url(attestationObject), transports: ['internal'] },
  };
  return { credential, response };
}

/** An authentication response to `options` (generateAuthenticationOptions' JSON), signed by `credential`. */
export function authenticate(
  options: { challenge: string; rpId?: string },
  origin: string,
  credential: SoftCredential,
  bend: Bend & { signWith?: KeyObject; counter?: number } = {},
) {
  credential.counter = bend.counter ?? credential.counter + 1;
  const clientDataJSON = Buffer.from(
    JSON.stringify({
      type: bend.type ?? 'webauthn.get',
      challenge: bend.challenge ?? options.challenge,
      origin: bend.origin ?? origin,
      crossOrigin: false,
    }),
  );
  const data = authData(bend.rpId ?? options.rpId!, UP | (bend.uv === false ? 0 : UV), credential.counter);
  const signed = Buffer.concat([data, createHash('sha256').update(clientDataJSON).digest()]);
  const signature = sign('sha256', signed, bend.signWith ?? credential.privateKey);
  return {
    id: b64url(credential.id),
    rawId: b64url(credential.id),
    type: 'public-key',
    clientExtensionResults: {},
    response: {
      clientDataJSON: b64url(clientDataJSON),
      authenticatorData: b64url(data),
      signature: b64url(signature),
      userHandle: undefined,
    },
  };
}
