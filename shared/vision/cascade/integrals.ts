/**
 * The integral images the JavaScript scan reads, as OpenCV 4.6's cv::integral makes them: the sum and squared
 * sum (int32, wrapping like OpenCV's CV_32S sqsum) and the tilted (45 degree) integral of tilted cascades, all in
 * the stride-wide planes of the compiled node layout (evaluate.ts). Part of haar-cascade.ts, which re-exports
 * tiltedIntegral.
 */

let tiltWork = new Int32Array(0);

/** Integral and squared integral (int32, wrapping like OpenCV's CV_32S sqsum) of a w x h image into stride-wide planes. */
export function integrals(img: Uint8Array, w: number, h: number, stride: number, sum: Int32Array, sqsum: Int32Array): void {
  for (let x = 0; x <= w; x++) {
    sum[x] = 0;
    sqsum[x] = 0;
  }
  for (let y = 0; y < h; y++) {
    const prev = y * stride;
    const row = prev + stride;
    const src = y * w;
    sum[row] = 0;
    sqsum[row] = 0;
    let s = 0;
    let q = 0;
    for (let x = 0; x < w; x++) {
      const v = img[src + x];
      s = (s + v) | 0;
      q = (q + v * v) | 0;
      sum[row + x + 1] = (sum[prev + x + 1] + s) | 0;
      sqsum[row + x + 1] = (sqsum[prev + x + 1] + q) | 0;
    }
  }
}

/**
 * OpenCV's tilted (45 degree) integral (cv::integral's third output) of a w x h image, written at `offset` into
 * `out` with row stride `stride`. Computed with the recurrence T(X,Y) = T(X-1,Y-1) + T(X+1,Y-1) - T(X,Y-2)
 * + I(X-1,Y-1) + I(X-1,Y-2) on a copy padded by h + 2 columns each side, so triangles reaching past the
 * image edges are summed correctly.
 */
export function tiltedIntegral(img: Uint8Array, w: number, h: number, out: Int32Array, offset: number, stride: number): void {
  const pad = h + 2;
  const pw = w + 1 + 2 * pad;
  const need = (h + 1) * pw;
  if (tiltWork.length < need) tiltWork = new Int32Array(need);
  const T = tiltWork;
  T.fill(0, 0, need);
  // Padded column p corresponds to tilted column X = p - pad; pixel column of I(X-1) is p - pad - 1.
  for (let Y = 1; Y <= h; Y++) {
    const r = Y * pw;
    const r1 = r - pw;
    const r2 = r1 - pw;
    const src1 = (Y - 1) * w; // row Y-1
    const src2 = (Y - 2) * w; // row Y-2
    for (let p = 1; p < pw - 1; p++) {
      const xi = p - pad - 1;
      const inside = xi >= 0 && xi < w;
      let v = T[r1 + p - 1] + T[r1 + p + 1];
      if (inside) v += img[src1 + xi];
      if (Y >= 2) {
        v -= T[r2 + p];
        if (inside) v += img[src2 + xi];
      }
      T[r + p] = v | 0;
    }
  }
  for (let Y = 0; Y <= h; Y++) {
    const src = Y * pw + pad;
    const dst = offset + Y * stride;
    for (let X = 0; X <= w; X++) out[dst + X] = T[src + X];
  }
}
