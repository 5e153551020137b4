/**
 * The known window alone, for the benchmarks that measure it by itself (lbph-robustness). #36: the product's
 * `confidence` is no longer this window-relative score but the distance's similarity (similarity.ts: a fixed map
 * per distance scale, no threshold moves it), through decision.ts `scoreOf`. Here, as before: a score in percent,
 * 0 to 100, higher is better, 0 for `unknown`, a monotonic map of the distance d within a given window:
 *
 *   unknown, score 0                                   d < min or d > max (outside the known window)
 *   score = 100 - (100 - EDGE_SCORE) * (d - min) / (max - min)   min <= d <= max
 *
 * so a face at the window's start scores 100 and one exactly at its far edge EDGE_SCORE (60%).
 *
 * Calibration (LBPH, 100x100 faces): on the OpenCV-made identity set in test/fixtures/opencv/lbph (5 people,
 * 20 query crops with shifts, flips and lighting changes) the nearest same-person distance was 4 to 61 and the
 * nearest other-person distance 117 to 136; the API tests' photos rescaled 0.5x to 1.4x gave 44 to 72. With
 * EDGE_SCORE 60, the second factor's default threshold of 65% sits at distance 75: above every genuine match
 * seen, far below every impostor.
 *
 * The full decision (limits, margin, certainty, one name per face, the reason of every unknown face) is
 * decision.ts, with calibrated defaults per recognizer and descriptor model in rules.ts; `decide` below is the
 * window alone, kept for the benchmarks that measure the window by itself.
 */
import type { UnknownReason } from '../api/index.js';

/** Score of a face exactly at the far edge of the known window. */
export const EDGE_SCORE = 60;

export interface DistanceWindow {
  /** Smallest distance accepted as known (LBPH's spec window starts at 4; embeddings at 0). */
  min: number;
  /** Largest distance accepted as known. */
  max: number;
}

export const DEFAULT_LBPH_WINDOW: DistanceWindow = { min: 4, max: 85 };
export const DEFAULT_EMBEDDING_WINDOW: DistanceWindow = { min: 0, max: 0.6 };

export type Decision =
  | {
      known: true;
      /** 0 to 100, one decimal. */
      confidence: number;
    }
  | { known: false; confidence: 0; reason: Exclude<UnknownReason, 'not_trained'> };

/** Decides known/unknown from a raw distance and maps it to the percent score; an unknown one says why. */
export function decide(distance: number, window: DistanceWindow): Decision {
  if (Number.isFinite(distance) && distance < window.min) return { known: false, confidence: 0, reason: 'copy_of_training_image' };
  if (!Number.isFinite(distance) || distance > window.max) return { known: false, confidence: 0, reason: 'no_match' };
  const span = window.max - window.min;
  const t = span > 0 ? (distance - window.min) / span : 0;
  const score = 100 - (100 - EDGE_SCORE) * t;
  return { known: true, confidence: Math.round(score * 10) / 10 };
}
