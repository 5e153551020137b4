/**
 * The kiosk gallery: the trained models as devices download them (`GET /api/models/trained*`), without the people
 * an administrator (or the identity provider, for the people of its second factor) kept out of it
 * (`people.kiosk = false`). The server's own recognition and verification keep using the full models.
 *
 * The filtered files are made from the snapshot's files (their templates removed, every other field kept) and
 * cached per snapshot version and excluded set; their version is the snapshot's when nobody is excluded, else a
 * hash of both, so a device's If-None-Match sees a change of the gallery as a new version. The filtered training.yml
 * (up to the full model's size, 1.2 GB at 10,000 faces) is read and written in pieces and kept in a file nobody
 * else can open (created in `spoolDir` and unlinked at once, so it goes with its descriptor), not in memory.
 */
import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { LbphModel } from '../../shared/lbph/lbph.js';
import { decodeLbphStream, encodeLbphBytes, type LabelIds } from '../../shared/recognition/model-files.js';
import type { Database } from '../db/database.js';
import { descriptorFile, type LbphSource, type ModelFile, snapshotFiles, type TrainedSnapshot } from '../storage/trained-files.js';

/** The labels kept out of the kiosk gallery now. */
export async function excludedFromKiosk(db: Database): Promise<Set<string>> {
  const rows = await db.query<{ label: string }>('SELECT label FROM people WHERE kiosk = false');
  return new Set(rows.map((r) => r.label));
}

/** The model without the samples (and names) of `excluded`. */
function modelWithout(model: LbphModel, labelIds: LabelIds, excluded: ReadonlySet<string>): { model: LbphModel; labelIds: LabelIds } {
  const dropIds = new Set(Object.entries(labelIds).flatMap(([name, id]) => (excluded.has(name) ? [id] : [])));
  const keep = [...model.labels.keys()].filter((i) => !dropIds.has(model.labels[i]));
  const kept = Object.fromEntries(Object.entries(labelIds).filter(([name]) => !excluded.has(name)));
  return {
    model: { ...model, histograms: keep.map((i) => model.histograms[i]), labels: Int32Array.from(keep, (i) => model.labels[i]) },
    labelIds: kept,
  };
}

const openFd = promisify(fs.open);
const write = promisify(fs.write);
const closeFd = promisify(fs.close);

/**
 * training.yml without the samples (and names) of `excluded`, read and written in pieces (any size): the result is
 * an open file in `spoolDir` that has no name (unlinked as soon as it is created), so it needs no clean-up and
 * lasts while it is used.
 */
export async function lbphFileWithout(
  file: ModelFile,
  labelMap: Uint8Array | null,
  excluded: ReadonlySet<string>,
  spoolDir: string,
): Promise<ModelFile> {
  return (await lbphWithout(await decodeLbphStream(file.chunks(), labelMap), excluded, spoolDir)).file;
}

/** lbphFileWithout from the model in memory; also gives the filtered model. */
async function lbphWithout(
  source: LbphSource,
  excluded: ReadonlySet<string>,
  spoolDir: string,
): Promise<{ file: ModelFile; model: LbphSource }> {
  const out = modelWithout(source.model, source.labelIds, excluded);
  const spool = path.join(spoolDir, `.tmp-kiosk-${randomUUID()}.yml`);
  const fd = await openFd(spool, 'wx+', 0o600);
  await fs.promises.rm(spool, { force: true });
  try {
    const hash = createHash('sha256');
    let size = 0;
    for (const bytes of encodeLbphBytes(out.model, out.labelIds)) {
      hash.update(bytes);
      for (let at = 0; at < bytes.length; ) at += (await write(fd, bytes, at, bytes.length - at, size + at)).bytesWritten;
      size += bytes.length;
    }
    return { file: descriptorFile(fd, size, hash.digest('hex')), model: out };
  } catch (err) {
    await closeFd(fd).catch(() => {});
    throw err;
  }
}

/** embeddings.json without the samples (and names) of `excluded`; every other field as it was. */
export function embeddingsWithout(json: string, excluded: ReadonlySet<string>): string {
  const file = JSON.parse(json) as { labels?: { label: number; name: string }[]; samples?: { label: number }[] };
  const labels = Array.isArray(file.labels) ? file.labels : [];
  const dropIds = new Set(labels.filter((l) => excluded.has(l.name)).map((l) => l.label));
  return JSON.stringify({
    ...file,
    labels: labels.filter((l) => !dropIds.has(l.label)),
    samples: (Array.isArray(file.samples) ? file.samples : []).filter((s) => !dropIds.has(s.label)),
  });
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export class KioskGallery {
  private cache: { key: string; snapshot: TrainedSnapshot } | null = null;

  constructor(
    private readonly db: Database,
    /** Where the filtered training.yml is spooled (a folder on disk, not a RAM disk, for large models). */
    private readonly spoolDir: string = os.tmpdir(),
  ) {}

  /** The snapshot a device gets: `snapshot` itself when nobody it knows is excluded. */
  async view(snapshot: TrainedSnapshot): Promise<TrainedSnapshot> {
    if (!snapshot.version) return snapshot;
    const all = await excludedFromKiosk(this.db);
    const excluded = new Set(snapshot.labels.filter((l) => all.has(l)));
    if (excluded.size === 0) return snapshot;
    const key = `${snapshot.version}\n${[...excluded].sort().join('\n')}`;
    if (this.cache?.key === key) return this.cache.snapshot;
    const { embedding, labelMap } = snapshot.files;
    // From the model in memory when the snapshot has it, else training.yml read again.
    const source = snapshot.lbphFile ? (snapshot.lbphModel ?? (await decodeLbphStream(snapshot.lbphFile.chunks(), labelMap))) : null;
    const lbph = source ? await lbphWithout(source, excluded, this.spoolDir) : null;
    const lbphFile = lbph?.file ?? null;
    const view: TrainedSnapshot = Object.freeze({
      version: createHash('sha256').update(key).digest('hex').slice(0, 16),
      trainedAt: snapshot.trainedAt,
      labels: snapshot.labels.filter((l) => !excluded.has(l)),
      // The names are in training.yml's labelsInfo now: the pickle would still name the excluded.
      files: snapshotFiles(lbphFile, null, embedding ? encoder.encode(embeddingsWithout(decoder.decode(embedding), excluded)) : null),
      lbphFile,
      lbphModel: lbph?.model ?? null,
    });
    this.cache = { key, snapshot: view };
    return view;
  }
}
