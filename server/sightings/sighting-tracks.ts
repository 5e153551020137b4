/**
 * A camera's face tracks (sighting-recorder.ts): the decision a sighting keeps of a face, and which track a face
 * continues, by descriptor when it has one, else by label or by the overlap of its box.
 */
import type { FaceResult } from '../../shared/api/common.js';
import { embeddingFeatureDistance } from '../../shared/recognition/corrections.js';
import type { NewSighting, SightingBox } from './sighting-store.js';

/** A face box overlapping a track's last box by at least this (intersection over union) continues the track. */
export const TRACK_IOU = 0.3;

/** The decision about one face, as a sighting keeps it. */
export type FaceDecision = Pick<NewSighting, 'box' | 'label' | 'candidate' | 'distance' | 'confidence' | 'certainty' | 'reason'>;

/** A recognition's face as a sighting's decision: `unknown` is no label. */
export function decisionOf(face: FaceResult): FaceDecision {
  return {
    box: { x: face.x, y: face.y, w: face.w, h: face.h },
    label: face.label === 'unknown' ? null : face.label,
    candidate: face.candidate?.label ?? null,
    distance: face.distance ?? face.candidate?.distance ?? null,
    confidence: face.confidence,
    certainty: face.certainty ?? null,
    reason: face.reason ?? null,
  };
}

export interface Track {
  label: string | null;
  box: SightingBox;
  /** The last descriptor of its face, when it had one. */
  descriptor: Float32Array | null;
  keptAt: number;
  seenAt: number;
}

/** A face as the tracks see it: its decision and, when the embedding worker described it, its descriptor. */
export type Tracked = FaceDecision & { descriptor?: Float32Array | null };

/**
 * The track a face continues, among `free` (those of its label no other face of the frame took): with a descriptor,
 * the track whose last descriptor is nearest within `max` (one farther away is someone else, wherever they stand);
 * otherwise, or against tracks without a comparable descriptor, a named face continues its label's track and an
 * unknown face the one whose last box it overlaps most (IoU >= TRACK_IOU).
 */
export function matchTrack(free: Track[], face: Tracked, descriptor: Float32Array | null, max: number | null): Track | undefined {
  let others = free;
  if (descriptor && max !== null) {
    let best: Track | undefined;
    let bestDistance = Number.POSITIVE_INFINITY;
    for (const t of free) {
      if (!t.descriptor) continue;
      const d = descriptorDistance(descriptor, t.descriptor);
      if (d <= max && d < bestDistance) {
        best = t;
        bestDistance = d;
      }
    }
    if (best) return best;
    others = free.filter((t) => !t.descriptor || t.descriptor.length !== descriptor.length);
  }
  if (face.label !== null) return others[0];
  return others
    .map((t) => ({ t, overlap: iou(t.box, face.box) }))
    .filter((m) => m.overlap >= TRACK_IOU)
    .sort((a, b) => b.overlap - a.overlap)[0]?.t;
}

/** The distance between two descriptors; infinite between different descriptor models (lengths). */
export function descriptorDistance(a: Float32Array, b: Float32Array): number {
  return a.length === b.length ? embeddingFeatureDistance(a, b) : Number.POSITIVE_INFINITY;
}

export function iou(a: SightingBox, b: SightingBox): number {
  const x1 = Math.max(a.x, b.x);
  const y1 = Math.max(a.y, b.y);
  const x2 = Math.min(a.x + a.w, b.x + b.w);
  const y2 = Math.min(a.y + a.h, b.y + b.h);
  const inter = Math.max(0, x2 - x1) * Math.max(0, y2 - y1);
  const union = a.w * a.h + b.w * b.h - inter;
  return union > 0 ? inter / union : 0;
}
