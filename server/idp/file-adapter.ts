/**
 * oidc-provider's storage adapter on files: one JSON file per record under `IDP_DATA_DIR/oidc/<Model>/`, each
 * written atomically (temporary file + rename), so sessions, grants, codes and refresh tokens survive a restart
 * and a crash never leaves a torn record. File names are the SHA-256 of the id (ids are opaque strings chosen
 * by the provider or a client; a hash keeps them out of path syntax).
 *
 * Lookups by `uid` (sessions) and `userCode` (device flow) go through small index files beside the records;
 * `revokeByGrantId` scans the token models, which is fine for the scale of one site's IdP. Expired records
 * answer as absent and are removed when met and by `sweep()`.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { removeStaleTemps } from '../storage/atomic.js';
import { writePrivateFileAtomic } from './private-file.js';

/** What oidc-provider stores: a JSON object with a few well-known fields. */
export interface AdapterPayload {
  [key: string]: unknown;
  grantId?: string;
  uid?: string;
  userCode?: string;
  consumed?: number;
}

interface StoredRecord {
  id: string;
  /** Epoch milliseconds; null: no expiry. */
  expiresAt: number | null;
  payload: AdapterPayload;
}

/** Models that carry a grantId, revoked together when a grant is. */
const GRANT_BOUND = [
  'AccessToken',
  'AuthorizationCode',
  'RefreshToken',
  'DeviceCode',
  'BackchannelAuthenticationRequest',
  'ClientCredentials',
];

const hash = (text: string) => createHash('sha256').update(text).digest('hex');

function isEnoent(err: unknown): boolean {
  return (err as NodeJS.ErrnoException).code === 'ENOENT';
}

/** The adapter interface oidc-provider calls (its documented contract). */
export interface OidcAdapter {
  upsert(id: string, payload: AdapterPayload, expiresIn: number | undefined): Promise<void>;
  find(id: string): Promise<AdapterPayload | undefined>;
  findByUserCode(userCode: string): Promise<AdapterPayload | undefined>;
  findByUid(uid: string): Promise<AdapterPayload | undefined>;
  consume(id: string): Promise<void>;
  destroy(id: string): Promise<void>;
  revokeByGrantId(grantId: string): Promise<void>;
}

export class FileAdapter implements OidcAdapter {
  private readonly dir: string;

  constructor(
    private readonly root: string,
    readonly model: string,
  ) {
    if (!/^[A-Za-z]+$/.test(model)) throw new Error(`not a model name: ${model}`);
    this.dir = path.join(root, model);
  }

  /** The adapter class oidc-provider instantiates once per model (`new Adapter(name)`). */
  static under(root: string): new (model: string) => FileAdapter {
    return class extends FileAdapter {
      constructor(model: string) {
        super(root, model);
      }
    };
  }

  async upsert(id: string, payload: AdapterPayload, expiresIn: number | undefined): Promise<void> {
    await fs.mkdir(this.dir, { recursive: true });
    const record: StoredRecord = { id, expiresAt: expiresIn ? Date.now() + expiresIn * 1000 : null, payload };
    await writePrivateFileAtomic(this.recordFile(id), JSON.stringify(record));
    if (typeof payload.uid === 'string' || typeof payload.userCode === 'string')
      await fs.mkdir(path.join(this.dir, 'index'), { recursive: true });
    if (typeof payload.uid === 'string') await writePrivateFileAtomic(this.indexFile('uid', payload.uid), id);
    if (typeof payload.userCode === 'string') await writePrivateFileAtomic(this.indexFile('userCode', payload.userCode), id);
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    return (await this.load(id))?.payload;
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    return this.findByIndex('uid', uid);
  }

  async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    return this.findByIndex('userCode', userCode);
  }

  async consume(id: string): Promise<void> {
    const record = await this.load(id);
    if (!record) return;
    record.payload.consumed = Math.floor(Date.now() / 1000);
    await writePrivateFileAtomic(this.recordFile(id), JSON.stringify(record));
  }

  async destroy(id: string): Promise<void> {
    const record = await this.readRecord(this.recordFile(id));
    await fs.rm(this.recordFile(id), { force: true });
    if (record) await this.removeIndexes(record);
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    for (const model of GRANT_BOUND) {
      const dir = path.join(this.root, model);
      for (const name of await listRecords(dir)) {
        const record = await this.readRecord(path.join(dir, name));
        if (record?.payload.grantId === grantId) await new FileAdapter(this.root, model).destroy(record.id);
      }
    }
  }

  /**
   * Ends everything of an account (a removed user): its sessions, grants, codes, refresh and stored access tokens,
   * and sign-ins in progress. Returns how many records went. A session holds `accountId`; an interaction names it
   * in its session or its login result.
   */
  static async revokeAccount(root: string, accountId: string): Promise<number> {
    let removed = 0;
    for (const model of ['Session', 'Grant', 'Interaction', ...GRANT_BOUND]) {
      const adapter = new FileAdapter(root, model);
      for (const name of await listRecords(adapter.dir)) {
        const record = await adapter.readRecord(path.join(adapter.dir, name));
        if (record && accountOf(record.payload).includes(accountId)) {
          await adapter.destroy(record.id);
          removed++;
        }
      }
    }
    return removed;
  }

  /** Removes expired records and leftover temporary files of every model; returns how many records went. */
  static async sweep(root: string): Promise<number> {
    let removed = 0;
    let models: string[];
    try {
      models = await fs.readdir(root);
    } catch (err) {
      if (isEnoent(err)) return 0;
      throw err;
    }
    for (const model of models.filter((m) => /^[A-Za-z]+$/.test(m))) {
      const adapter = new FileAdapter(root, model);
      await removeStaleTemps(adapter.dir);
      await removeStaleTemps(path.join(adapter.dir, 'index'));
      for (const name of await listRecords(adapter.dir)) {
        const record = await adapter.readRecord(path.join(adapter.dir, name));
        if (record && adapter.expired(record)) {
          await adapter.destroy(record.id);
          removed++;
        }
      }
    }
    return removed;
  }

  private expired(record: StoredRecord): boolean {
    return record.expiresAt !== null && record.expiresAt <= Date.now();
  }

  private async load(id: string): Promise<StoredRecord | undefined> {
    const record = await this.readRecord(this.recordFile(id));
    if (!record || record.id !== id) return undefined;
    if (this.expired(record)) {
      await this.destroy(id);
      return undefined;
    }
    return record;
  }

  private async findByIndex(kind: 'uid' | 'userCode', key: string): Promise<AdapterPayload | undefined> {
    let id: string;
    try {
      id = await fs.readFile(this.indexFile(kind, key), 'utf8');
    } catch (err) {
      if (isEnoent(err)) return undefined;
      throw err;
    }
    const payload = await this.find(id);
    // An index entry left by a record that was replaced under another uid does not count.
    return payload && payload[kind] === key ? payload : undefined;
  }

  private async removeIndexes(record: StoredRecord): Promise<void> {
    for (const kind of ['uid', 'userCode'] as const) {
      const key = record.payload[kind];
      if (typeof key !== 'string') continue;
      const file = this.indexFile(kind, key);
      const points = await fs.readFile(file, 'utf8').catch(() => null);
      if (points === record.id) await fs.rm(file, { force: true });
    }
  }

  private async readRecord(file: string): Promise<StoredRecord | undefined> {
    try {
      return JSON.parse(await fs.readFile(file, 'utf8')) as StoredRecord;
    } catch (err) {
      if (isEnoent(err)) return undefined;
      throw err;
    }
  }

  private recordFile(id: string): string {
    return path.join(this.dir, `${hash(id)}.json`);
  }

  private indexFile(kind: string, key: string): string {
    return path.join(this.dir, 'index', `${kind}-${hash(key)}`);
  }
}

/** The accounts a record speaks for (oidc-provider's fields). */
function accountOf(payload: AdapterPayload): unknown[] {
  const session = payload.session as { accountId?: unknown } | undefined;
  const login = (payload.result as { login?: { accountId?: unknown } } | undefined)?.login;
  return [payload.accountId, session?.accountId, login?.accountId];
}

async function listRecords(dir: string): Promise<string[]> {
  try {
    return (await fs.readdir(dir)).filter((n) => n.endsWith('.json') && !n.startsWith('.'));
  } catch (err) {
    if (isEnoent(err)) return [];
    throw err;
  }
}
