/**
 * Makes a Y4M video (what Chromium's fake webcam plays) from a photo: the photo letterboxed onto a frame of
 * the given size, converted to YUV 4:2:0 (BT.601 full range, as JPEG uses). One frame: Chromium loops it.
 * Used by the e2e tests and the in-browser engine bench.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';

/** Writes (once, cached in the temp dir) the Y4M for the photo at `photoPath` and returns its path. */
export async function makeY4m(photoPath: string, width = 640, height = 480): Promise<string> {
  const out = path.join(os.tmpdir(), `lookout-cam-${path.basename(photoPath).replace(/\W/g, '_')}-${width}x${height}.y4m`);
  if (fs.existsSync(out)) return out;
  const { data } = await sharp(photoPath)
    .resize(width, height, { fit: 'contain', background: { r: 0, g: 0, b: 0 } })
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const y = Buffer.alloc(width * height);
  const u = Buffer.alloc((width / 2) * (height / 2));
  const v = Buffer.alloc((width / 2) * (height / 2));
  const clamp = (n: number) => Math.max(0, Math.min(255, Math.round(n)));
  for (let i = 0; i < width * height; i++) {
    const r = data[i * 3],
      g = data[i * 3 + 1],
      b = data[i * 3 + 2];
    y[i] = clamp(0.299 * r + 0.587 * g + 0.114 * b);
  }
  for (let cy = 0; cy < height / 2; cy++) {
    for (let cx = 0; cx < width / 2; cx++) {
      let r = 0,
        g = 0,
        b = 0;
      for (const [dx, dy] of [
        [0, 0],
        [1, 0],
        [0, 1],
        [1, 1],
      ]) {
        const i = ((cy * 2 + dy) * width + cx * 2 + dx) * 3;
        r += data[i];
        g += data[i + 1];
        b += data[i + 2];
      }
      r /= 4;
      g /= 4;
      b /= 4;
      u[cy * (width / 2) + cx] = clamp(128 - 0.168736 * r - 0.331264 * g + 0.5 * b);
      v[cy * (width / 2) + cx] = clamp(128 + 0.5 * r - 0.418688 * g - 0.081312 * b);
    }
  }
  const tmp = `${out}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, Buffer.concat([Buffer.from(`YUV4MPEG2 W${width} H${height} F30:1 Ip A1:1 C420jpeg\nFRAME\n`), y, u, v]));
  fs.renameSync(tmp, out);
  return out;
}
