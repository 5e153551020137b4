/**
 * OpenCV-compatible Haar cascade face/object detector (CascadeClassifier::detectMultiScale of OpenCV 4.6, CPU path),
 * bit-exact by construction: same pyramid sizes and INTER_LINEAR_EXACT resize, the same integral images, the same
 * float/double arithmetic in feature evaluation (Math.fround where OpenCV uses float), the same window stepping and
 * the same groupRectangles. Runs unchanged in Node and browsers. Each level's resize, integrals and window scan run
 * as WebAssembly generated from the cascade (haar-wasm.ts, with SIMD where the host has it), else in JavaScript
 * (cascade/evaluate.ts); every path is tested against OpenCV's boxes.
 *
 * This module is the public entry; the parts live in cascade/: parse.ts (the cascade XML), evaluate.ts (the
 * JavaScript scan and integrals), detect.ts (detectMultiScale) and group.ts (groupRectangles).
 */
export { HaarCascadeParseError, parseHaarCascade, type HaarCascade } from './cascade/parse.js';
export { tiltedIntegral } from './cascade/integrals.js';
export { detectMultiScale, stripeCount, type CascadeScan, type DetectOptions } from './cascade/detect.js';
export { groupRectangles } from './cascade/group.js';
