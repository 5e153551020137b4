/**
 * The kiosk gallery: the trained models as devices download them (`GET /api/models/trained*`), without the people
 * an administrator (or the identity provider, for the people of its second factor) kept out of it
 * (`people.kiosk = false`). The server's own recognition and verification keep using the full models.
 *
 * The filtered files are made from the snapshot's bytes (their templates removed, every other field kept) and
 * cached per snapshot version and excluded set; their version is the snapshot's when nobody is excluded, else a
 * hash of both, so a device's If-None-Match sees a change of the gallery as a new version.
 */
import { createHash } from 'node:crypto';
import { decodeLbphFile, encodeLbphFile } from '../../shared/recognition/model-files.js';
import type { Database } from '../db/database.js';
import type { TrainedSnapshot } from '../storage/trained-files.js';

/** The labels kept out of the kiosk gallery now. */
export async function excludedFromKiosk(db: Database): Promise<Set<string>> {
  const rows = await db.query<{ label: string }>('SELECT label FROM people WHERE kiosk = false');
  return new Set(rows.map((r) => r.label));
}

/** training.yml without the samples (and names) of `excluded`. */
export function lbphWithout(yaml: string, labelMap: Uint8Array | null, excluded: ReadonlySet<string>): string {
  const { model, labelIds } = decodeLbphFile(yaml, labelMap);
  const dropIds = new Set(Object.entries(labelIds).flatMap(([name, id]) => (excluded.has(name) ? [id] : [])));
  const keep = [...model.labels.keys()].filter((i) => !dropIds.has(model.labels[i]));
  const kept = Object.fromEntries(Object.entries(labelIds).filter(([name]) => !excluded.has(name)));
  return encodeLbphFile(
    { ...model, histograms: keep.map((i) => model.histograms[i]), labels: Int32Array.from(keep, (i) => model.labels[i]) },
    kept,
  );
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

  constructor(private readonly db: Database) {}

  /** The snapshot a device gets: `snapshot` itself when nobody it knows is excluded. */
  async view(snapshot: TrainedSnapshot): Promise<TrainedSnapshot> {
    if (!snapshot.version) return snapshot;
    const all = await excludedFromKiosk(this.db);
    const excluded = new Set(snapshot.labels.filter((l) => all.has(l)));
    if (excluded.size === 0) return snapshot;
    const key = `${snapshot.version}\n${[...excluded].sort().join('\n')}`;
    if (this.cache?.key === key) return this.cache.snapshot;
    const { lbph, embedding, labelMap } = snapshot.files;
    const files = {
      lbph: lbph ? encoder.encode(lbphWithout(decoder.decode(lbph), labelMap, excluded)) : null,
      // The names are in training.yml's labelsInfo now: the pickle would still name the excluded.
      labelMap: null,
      embedding: embedding ? encoder.encode(embeddingsWithout(decoder.decode(embedding), excluded)) : null,
    };
    const view: TrainedSnapshot = Object.freeze({
      version: createHash('sha256').update(key).digest('hex').slice(0, 16),
      trainedAt: snapshot.trainedAt,
      labels: snapshot.labels.filter((l) => !excluded.has(l)),
      files: Object.freeze(files),
    });
    this.cache = { key, snapshot: view };
    return view;
  }
}
