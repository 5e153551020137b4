/**
 * The demo's fake camera: a Y4M clip of one photo slowly zooming in and out, which Chromium's fake webcam loops.
 * A clip and not one still frame: a camera that repeats one frame makes a training photo pixel for pixel equal to
 * the frames recognised later, an LBPH distance of 0, which the spec's window (known iff 4 <= distance <= 85) calls
 * unknown (see e2e/training.spec.ts). Each zoom step is made by bench/fake-camera.ts, as the e2e cameras are.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { makeY4m } from '../../bench/fake-camera.js';

const WIDTH = 640;
const HEIGHT = 480;
/**
 * Zoom of each frame, there and back in 1% steps: a long loop of distinct frames, so the few the training photos
 * were taken from come round rarely (a frame equal to a training photo is refused as a copy, and the live name
 * would flicker to "unknown" each time it comes round), while each frame is close enough for the same person.
 */
const UP = Array.from({ length: 25 }, (_, i) => 1 + i / 100);
const ZOOMS = [...UP, ...UP.slice(1, -1).reverse()];
/** Frames per second of the clip, and frames per zoom step. */
const FPS = 6;
const REPEAT = 1;

/** Writes (once per photo, in the temp dir) the clip for `photoPath` and returns its path. */
export async function makeZoomingCamera(photoPath: string): Promise<string> {
  const name = path.basename(photoPath).replace(/\W/g, '_');
  const out = path.join(os.tmpdir(), `lookout-demo-cam-${name}-${WIDTH}x${HEIGHT}-${FPS}fps-${ZOOMS.length}z.y4m`);
  if (fs.existsSync(out)) return out;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-demo-cam-'));
  try {
    const framed = await sharp(photoPath)
      .resize(WIDTH, HEIGHT, { fit: 'contain', background: { r: 0, g: 0, b: 0 } })
      .png()
      .toBuffer();
    const frames: Buffer[] = [];
    for (const [i, zoom] of ZOOMS.entries()) {
      const w = Math.round(WIDTH * zoom);
      const h = Math.round(HEIGHT * zoom);
      const still = path.join(dir, `zoom-${name}-${i}.png`);
      await sharp(framed)
        .resize(w, h)
        .extract({ left: Math.floor((w - WIDTH) / 2), top: Math.floor((h - HEIGHT) / 2), width: WIDTH, height: HEIGHT })
        .toFile(still);
      const single = await makeY4m(still, WIDTH, HEIGHT);
      const y4m = fs.readFileSync(single);
      fs.rmSync(single);
      // makeY4m writes a header line, then one "FRAME\n" and its planes: keep the frame.
      const frame = y4m.subarray(y4m.indexOf('FRAME\n'));
      for (let r = 0; r < REPEAT; r++) frames.push(frame);
    }
    const tmp = `${out}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, Buffer.concat([Buffer.from(`YUV4MPEG2 W${WIDTH} H${HEIGHT} F${FPS}:1 Ip A1:1 C420jpeg\n`), ...frames]));
    fs.renameSync(tmp, out);
    return out;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
