import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resizeLinearExact } from '../image/ops.js';
import { parseHaarCascade } from './haar-cascade.js';
import { haarKernel } from './haar-wasm.js';

const cascade = parseHaarCascade(readFileSync(resolve(process.cwd(), 'public/models/haarcascade_frontalface_alt2.xml'), 'utf8'));

/** Deterministic noise with some structure (gradients and edges), so rounding in every step is exercised. */
function testImage(w: number, h: number, seed: number): Uint8Array {
  const out = new Uint8Array(w * h);
  let s = seed;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      s = (Math.imul(s, 1103515245) + 12345) >>> 0;
      const noise = s >>> 24;
      out[y * w + x] = (x * 7 + y * 3 + (x > w / 2 ? 90 : 0) + (noise & 63)) & 255;
    }
  }
  return out;
}

describe('the cascade kernel pyramid (resize and integrals in WebAssembly)', () => {
  const [srcW, srcH] = [157, 101];
  const src = testImage(srcW, srcH, 7);
  const kernel = haarKernel(cascade, srcW + 1)!;

  it.each([
    [157, 101], // the same size: a copy
    [143, 92],
    [98, 63],
    [78, 50], // about half: no source row reused
    [40, 26],
    [157, 30], // one axis only
    [21, 101],
    [3, 2],
  ])('resizes to %ix%i exactly as resizeLinearExact and integrates as OpenCV, in both layouts', (lw, lh) => {
    for (const ystep of [1, 2]) checkLevel(lw, lh, ystep);
  });

  /** ystep 2: the split layout of SIMD step-2 scans, each plane row's even columns then its odd ones (emit.ts). */
  function checkLevel(lw: number, lh: number, ystep: number): void {
    const half = ystep === 2 ? kernel.stride / 2 : 0;
    const column = (x: number) => (half ? (x & 1) * half + (x >> 1) : x);
    kernel.begin(src, srcW, srcH, srcW, srcH);
    kernel.level(lw, lh, ystep);
    const { pixels, cells } = kernel.views(lw, lh);
    const want = resizeLinearExact({ width: srcW, height: srcH, data: src }, lw, lh).data;
    expect(Buffer.from(pixels).equals(Buffer.from(want))).toBe(true);
    // Integrals: row 0 and column 0 zero, cell (x, y) the sum (and squared sum) over the pixels above-left of it.
    let mismatches = 0;
    for (let y = 0; y <= lh; y++) {
      let s = 0;
      let q = 0;
      for (let x = 0; x <= lw; x++) {
        if (y > 0 && x > 0) {
          for (let yy = 0; yy < y; yy++) {
            const v = want[yy * lw + x - 1];
            s += v;
            q += v * v;
          }
        }
        const at = y * kernel.pitch + column(x);
        if (cells[at] !== s || cells[at + kernel.sqOffset] !== q) mismatches++;
      }
    }
    expect(mismatches).toBe(0);
  }
});
