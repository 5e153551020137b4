/**
 * detectMultiScale: validates the options, builds OpenCV's scale list, runs each pyramid level through the
 * generated WebAssembly kernel (haar-wasm.ts) or the JavaScript scan (evaluate.ts), maps the accepted windows back
 * to image coordinates in float as OpenCV does, groups them (group.ts) and clips them to the image. Part of
 * haar-cascade.ts, which re-exports it.
 */
import { cvRound } from '../../image/ops.js';
import type { GrayImage, Rect } from '../../image/types.js';
import { haarKernel, haarWasmUnavailable, type HaarKernel } from '../haar-wasm.js';
import { scanLevelJs, type LevelScan } from './evaluate.js';
import { tiltedIntegral } from './integrals.js';
import { groupRectangles } from './group.js';
import type { HaarCascade } from './parse.js';

const fround = Math.fround;

export interface DetectOptions {
  /** Pyramid step, > 1. Default 1.1. */
  scaleFactor?: number;
  /** Neighbours a group needs to be kept (groupRectangles threshold); 0 returns the raw candidates. Default 5. */
  minNeighbors?: number;
  /** Smallest window. Default 30x30. */
  minSize?: { width: number; height: number };
  /** Largest window; 0 or missing means the image size. */
  maxSize?: { width: number; height: number };
  /**
   * OpenCV's stripe count for this image's pyramid (see rowsScanned); missing: from the first level scanned. Only
   * cascade-split.ts sets it, so a part that starts at a later level scans the rows the whole pyramid would.
   */
  stripes?: number;
}

/** OpenCV's stripe count: one stripe per 32 window positions across the first level (cvCeil(szw.width / 32.)). */
export function stripeCount(firstLevelWorkW: number): number {
  return Math.ceil(firstLevelWorkW / 32);
}

/**
 * The rows of a level OpenCV 4.6 scans. detectMultiScaleNoGrouping splits every level's rows into `stripes` stripes
 * of max(((workH / ystep) + stripes - 1) / stripes, 1) * ystep rows (integer division), so when workH / ystep drops
 * a last odd row, or the stripes add up to less than workH, the bottom rows are never scanned. Whole images rarely
 * show it; small regions (the eyes in half a face) do.
 */
function rowsScanned(workH: number, ystep: number, stripes: number): number {
  if (stripes <= 0) return 0; // no stripe at all (a first level without a window position): nothing is scanned
  const stripeSize = Math.max(Math.floor((Math.floor(workH / ystep) + stripes - 1) / stripes), 1) * ystep;
  return Math.min(workH, stripes * stripeSize);
}

/** The same in the generated WebAssembly (haar-wasm.ts; `kernel.begin` was called for this image). Returns its row pitch. */
function scanLevelWasm(cascade: HaarCascade, kernel: HaarKernel, lv: LevelScan, out: number[]): number {
  kernel.level(lv.lw, lv.lh, lv.ystep);
  if (cascade.hasTiltedFeatures) {
    const { pixels, cells } = kernel.views(lv.lw, lv.lh);
    tiltedIntegral(pixels, lv.lw, lv.lh, cells, kernel.tiltedOffset, kernel.pitch);
  }
  const found = kernel.scan(lv.workW, lv.workH, lv.ystep);
  for (let i = 0; i < found.length; i++) out.push(found[i]);
  return kernel.pitch;
}

function checkSize(s: { width: number; height: number } | undefined, what: string): void {
  if (s === undefined) return;
  if (!Number.isFinite(s.width) || !Number.isFinite(s.height) || s.width < 0 || s.height < 0) {
    throw new Error(`detectMultiScale: ${what} must be non-negative numbers`);
  }
}

/**
 * Which window scan runs: `auto` the generated WebAssembly one (haar-wasm.ts) with SIMD where the host can
 * compile it, else without, else the JavaScript one; `simd`, `wasm` (no SIMD) or `js` force one (tests compare
 * them). All give identical results.
 */
export type CascadeScan = 'auto' | 'simd' | 'wasm' | 'js';

/**
 * Multi-scale detection with OpenCV 4.6 `CascadeClassifier::detectMultiScale(gray, objects, scaleFactor,
 * minNeighbors, 0, minSize, maxSize)` semantics, on an 8-bit gray image. Returns boxes in OpenCV's order.
 */
export function detectMultiScale(cascade: HaarCascade, gray: GrayImage, options: DetectOptions = {}, scan: CascadeScan = 'auto'): Rect[] {
  const scaleFactor = options.scaleFactor ?? 1.1;
  const minNeighbors = options.minNeighbors ?? 5;
  const minSize = options.minSize ?? { width: 30, height: 30 };
  checkSize(options.minSize, 'minSize');
  checkSize(options.maxSize, 'maxSize');
  if (!(scaleFactor > 1) || !Number.isFinite(scaleFactor)) throw new Error(`detectMultiScale: scaleFactor must be > 1, got ${scaleFactor}`);
  if (!Number.isInteger(minNeighbors) || minNeighbors < 0) throw new Error(`detectMultiScale: minNeighbors must be an integer >= 0`);
  const imgW = gray.width;
  const imgH = gray.height;
  if (gray.data.length < imgW * imgH) throw new Error('detectMultiScale: image data is shorter than width * height');
  let maxW = options.maxSize?.width ?? 0;
  let maxH = options.maxSize?.height ?? 0;
  if (maxW === 0 || maxH === 0) {
    maxW = imgW;
    maxH = imgH;
  }
  const W0 = cascade.windowWidth;
  const H0 = cascade.windowHeight;

  // Scale list: the factor stays double while stepping, each level keeps it as float.
  const scales: number[] = [];
  if (imgW > 0 && imgH > 0) {
    for (let factor = 1; ; factor *= scaleFactor) {
      const ww = cvRound(W0 * factor);
      const wh = cvRound(H0 * factor);
      if (ww > maxW || wh > maxH || ww > imgW || wh > imgH) break;
      if (ww < minSize.width || wh < minSize.height) continue;
      scales.push(fround(factor));
    }
  }
  const candidates: Rect[] = [];
  if (scales.length > 0) {
    // One row stride for all levels (the first level is the largest), as OpenCV's shared buffer does.
    const w0 = cvRound(fround(imgW / scales[0]));
    const h0 = cvRound(fround(imgH / scales[0]));
    const kernel = scan === 'js' ? null : haarKernel(cascade, w0 + 1, scan !== 'wasm');
    if ((scan === 'wasm' || scan === 'simd') && !kernel) throw new Error(`detectMultiScale: ${haarWasmUnavailable()}`);
    if (scan === 'simd' && !kernel!.simd) throw new Error('detectMultiScale: this host has no WebAssembly SIMD');
    kernel?.begin(gray.data, imgW, imgH, w0, h0);
    const stripes = options.stripes ?? stripeCount(Math.max(w0 + 1 - W0, 0));
    const pts: number[] = [];
    for (const sc of scales) {
      const lw = cvRound(fround(imgW / sc));
      const lh = cvRound(fround(imgH / sc));
      const workW = Math.max(lw + 1 - W0, 0);
      const ystep = sc >= 2 ? 1 : 2;
      const workH = rowsScanned(Math.max(lh + 1 - H0, 0), ystep, stripes);
      if (workW === 0 || workH === 0) continue;
      pts.length = 0;
      const lv = { w0, h0, lw, lh, workW, workH, ystep };
      const pitch = kernel ? scanLevelWasm(cascade, kernel, lv, pts) : scanLevelJs(cascade, gray, lv, pts);
      const winW = cvRound(fround(W0 * sc));
      const winH = cvRound(fround(H0 * sc));
      for (const p of pts) {
        const y = Math.floor(p / pitch);
        const x = p - y * pitch;
        // Window position back in image coordinates: int * float in float, then cvRound.
        candidates.push({ x: cvRound(fround(x * sc)), y: cvRound(fround(y * sc)), width: winW, height: winH });
      }
    }
  }
  const grouped = groupRectangles(candidates, minNeighbors, 0.2);
  // clipObjects: intersect with the image, drop empty results.
  const out: Rect[] = [];
  for (const r of grouped) {
    const x1 = Math.max(r.x, 0);
    const y1 = Math.max(r.y, 0);
    const w = Math.min(r.x + r.width, imgW) - x1;
    const h = Math.min(r.y + r.height, imgH) - y1;
    if (r.width > 0 && r.height > 0 && w > 0 && h > 0) out.push({ x: x1, y: y1, width: w, height: h });
  }
  return out;
}
