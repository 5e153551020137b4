/**
 * Signing keys and cookie keys of the identity provider, in `IDP_DATA_DIR/keys.json` (mode 0600).
 *
 * Generated once on first start and kept, so tokens and session cookies stay valid across restarts. Rotation
 * (`npm run idp -- keys rotate`) puts a new RS256 key first: oidc-provider signs with the first key of an
 * algorithm, and publishes every key in the JWKS, so tokens signed with the previous key keep verifying until
 * they expire. The oldest keys beyond `keep` are dropped. A running IdP takes rotated keys at its next start.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import { writePrivateFileAtomic } from './private-file.js';
import { FileLock } from '../storage/file-lock.js';

export const SIGNING_ALG = 'RS256';

export interface SigningKey extends JWK {
  kid: string;
  alg: string;
  use: 'sig';
}

interface KeysFile {
  version: 1;
  /** Newest first: the first signs. */
  signing: (SigningKey & { created: string })[];
  /** Keys of oidc-provider's signed cookies; the first signs, all verify. */
  cookies: string[];
}

/** The public half of a private JWK: what the JWKS endpoint shows. */
export function publicJwk(key: JWK): JWK {
  const { d, p, q, dp, dq, qi, ...pub } = key;
  return pub;
}

async function newSigningKey(): Promise<SigningKey & { created: string }> {
  const { privateKey } = await generateKeyPair(SIGNING_ALG, { extractable: true, modulusLength: 2048 });
  const jwk = await exportJWK(privateKey);
  return { ...jwk, kid: randomUUID(), alg: SIGNING_ALG, use: 'sig', created: new Date().toISOString() };
}

export class KeyStore {
  private readonly file: string;
  private readonly lock: FileLock;

  constructor(dataDir: string) {
    this.file = path.join(dataDir, 'keys.json');
    this.lock = new FileLock(path.join(dataDir, 'keys.lock'), { staleMs: 30_000 });
  }

  /** The keys, generated and saved on first use. */
  async load(): Promise<{ signing: SigningKey[]; cookies: string[] }> {
    const existing = await this.read();
    const file = existing ?? (await this.lock.run(async () => (await this.read()) ?? (await this.create())));
    return { signing: file.signing.map(({ created, ...k }) => k), cookies: file.cookies };
  }

  /** Adds a new signing key in front and keeps at most `keep` keys (the new one included). Returns the new kid. */
  async rotate(keep = 2): Promise<{ kid: string; kept: string[]; dropped: string[] }> {
    if (!Number.isInteger(keep) || keep < 2)
      throw new Error('keep at least 2 keys: the new one and the one that signed the tokens still out there');
    await fs.mkdir(path.dirname(this.file), { recursive: true });
    return this.lock.run(async () => {
      const file = (await this.read()) ?? (await this.create());
      const key = await newSigningKey();
      const all = [key, ...file.signing];
      file.signing = all.slice(0, keep);
      await this.write(file);
      return { kid: key.kid, kept: file.signing.map((k) => k.kid), dropped: all.slice(keep).map((k) => k.kid) };
    });
  }

  async list(): Promise<{ kid: string; alg: string; created: string }[]> {
    const file = await this.read();
    return (file?.signing ?? []).map((k) => ({ kid: k.kid, alg: k.alg, created: k.created }));
  }

  private async create(): Promise<KeysFile> {
    await fs.mkdir(path.dirname(this.file), { recursive: true });
    const file: KeysFile = { version: 1, signing: [await newSigningKey()], cookies: [randomBytes(32).toString('base64url')] };
    await this.write(file);
    return file;
  }

  private async write(file: KeysFile): Promise<void> {
    await writePrivateFileAtomic(this.file, `${JSON.stringify(file, null, 2)}\n`);
  }

  private async read(): Promise<KeysFile | null> {
    let text: string;
    try {
      text = await fs.readFile(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
    const file = JSON.parse(text) as KeysFile;
    if (file.version !== 1 || !Array.isArray(file.signing) || file.signing.length === 0 || !Array.isArray(file.cookies))
      throw new Error(`${this.file}: not a keys file of version 1`);
    return file;
  }
}
