/**
 * The kiosk gallery's models in compact form (#27 section 2): one segment per person and recognizer
 * (shared/recognition/compact-model.ts), named by the first 16 hex digits of its sha256, made once per snapshot
 * version from the kiosk snapshot's LBPH model in memory (the one its training.yml was written from, so they hold
 * exactly what the YAML download holds; the file is read again only for a snapshot without it) and its
 * embeddings.json. A person whose
 * samples did not change keeps the same segment, and so the same hash, across trainings: a device fetches only
 * the segments it lacks.
 */
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { embeddingSegments, lbphSegments, type PersonSegment } from '../../shared/recognition/compact-model.js';
import { decodeLbphStream } from '../../shared/recognition/model-files.js';
import { decodeEmbeddingFile } from '../../shared/embedding/model-file.js';
import type { CompactSegmentRef } from '../../shared/api/compact-models.js';
import type { TrainedSnapshot } from '../storage/trained-files.js';

export interface CompactSet {
  /** The snapshot version the segments were made from. */
  version: string;
  lbph: {
    head: { radius: number; neighbors: number; gridX: number; gridY: number; threshold: number; faceAlignment: string | null };
    people: CompactSegmentRef[];
    wireBytes: number;
  } | null;
  embedding: { descriptorModel: string; dim: number; people: CompactSegmentRef[]; wireBytes: number } | null;
  /** Every segment of this set by hash. */
  segments: Map<string, Uint8Array>;
}

const gzipAsync = promisify(gzip);

/** The segments gzipped one by one, in all (on libuv's threads, a few at a time: not on the event loop). */
async function wireBytes(list: PersonSegment[]): Promise<number> {
  let total = 0;
  for (let i = 0; i < list.length; i += 32) {
    const sizes = await Promise.all(list.slice(i, i + 32).map(async (s) => (await gzipAsync(s.bytes)).length));
    for (const n of sizes) total += n;
  }
  return total;
}

function refs(list: PersonSegment[], into: Map<string, Uint8Array>): CompactSegmentRef[] {
  return list.map((s) => {
    const hash = createHash('sha256').update(s.bytes).digest('hex').slice(0, 16);
    into.set(hash, s.bytes);
    return { label: s.name, hash, bytes: s.bytes.length, samples: s.samples };
  });
}

/** Builds a snapshot's compact set. */
export async function compactSet(snapshot: TrainedSnapshot): Promise<CompactSet> {
  if (!snapshot.version) throw new Error('compact set: nothing trained');
  const segments = new Map<string, Uint8Array>();
  let lbph: CompactSet['lbph'] = null;
  if (snapshot.lbphFile) {
    // The model in memory when the snapshot has it (a training or start-up made it); else training.yml read again.
    const { model, labelIds } = snapshot.lbphModel ?? (await decodeLbphStream(snapshot.lbphFile.chunks(), snapshot.files.labelMap));
    const { radius, neighbors, gridX, gridY, threshold } = model;
    const list = lbphSegments(model, labelIds);
    lbph = {
      head: { radius, neighbors, gridX, gridY, threshold, faceAlignment: model.faceAlignment ?? null },
      people: refs(list, segments),
      wireBytes: await wireBytes(list),
    };
  }
  let embedding: CompactSet['embedding'] = null;
  const json = snapshot.files.embedding;
  if (json) {
    const file = decodeEmbeddingFile(new TextDecoder().decode(json));
    const labelIds = Object.fromEntries(file.labels.map((l) => [l.name, l.label]));
    const list = embeddingSegments(file.model, labelIds);
    embedding = { descriptorModel: file.descriptor, dim: file.model.dim, people: refs(list, segments), wireBytes: await wireBytes(list) };
  }
  return { version: snapshot.version, lbph, embedding, segments };
}

/** compactSet of the latest snapshot asked for, made once per version (concurrent callers share the work). */
export class KioskCompact {
  private last: { version: string; set: Promise<CompactSet> } | null = null;
  /** The previous version's segments stay answerable while devices that read its manifest fetch them. */
  private previous: CompactSet | null = null;

  view(snapshot: TrainedSnapshot): Promise<CompactSet> {
    const version = snapshot.version;
    if (!version) return Promise.reject(new Error('compact set: nothing trained'));
    if (this.last?.version === version) return this.last.set;
    const before = this.last;
    const set = compactSet(snapshot);
    this.last = { version, set };
    void before?.set.then(
      (s) => {
        this.previous = s;
      },
      () => undefined,
    );
    set.catch(() => {
      if (this.last?.set === set) this.last = null; // the next request tries again
    });
    return set;
  }

  /** The segment with this hash in the current or previous set, or null. */
  segment(current: CompactSet, hash: string): Uint8Array | null {
    return current.segments.get(hash) ?? this.previous?.segments.get(hash) ?? null;
  }
}
