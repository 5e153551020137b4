/**
 * Remote engine benchmark: RemoteDetector.detect on a 640x480 photo against Lookout's model server started
 * in-process on 127.0.0.1 (FaceBoxes on tfjs WASM), HTTP and JSON included, and the bare infer call with a
 * pre-built request body to show what the client side (resize, serialise, parse) costs on top.
 *
 * Input: test/fixtures/images/faces/sample1.jpg scaled by sharp to cover 640x480 (aspect kept, centre crop).
 */
import { resolve } from 'node:path';
import sharp from 'sharp';
import { readFile } from 'node:fs/promises';
import { rgbToGray } from '../shared/image/ops.js';
import { detectMultiScale, parseHaarCascade } from '../shared/vision/haar-cascade.js';
import { ssdInput } from '../shared/vision/ssd-face.js';
import { RemoteDetector } from '../server/engines/remote/remote-detector.js';
import { listenModelServer } from '../server/model-server/app.js';
import { type BenchRow, timeRuns } from './types.js';

const WARMUP = 5;
const RUNS = 25;
const MODEL = 'face-detection-retail-0005';

export async function benchRemote(): Promise<BenchRow[]> {
  const photo = resolve(process.cwd(), 'test/fixtures/images/faces/sample1.jpg');
  const { data, info } = await sharp(photo).resize(640, 480, { fit: 'cover' }).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const rgb = { width: info.width, height: info.height, channels: 3 as const, data: new Uint8Array(data) };

  const srv = await listenModelServer();
  try {
    if (!(await srv.server.loaded)) throw new Error('the model server failed to load FaceBoxes');
    const remote = new RemoteDetector(srv.url, MODEL, 0.5, 30_000);
    const faces = (await remote.detect(rgb)).length;
    const detect = await timeRuns(() => remote.detect(rgb), WARMUP, RUNS);

    const body = JSON.stringify({
      inputs: [
        { name: 'input.1', shape: [1, 3, 300, 300], datatype: 'FP32', data: Array.from(ssdInput(rgb, { width: 300, height: 300 })) },
      ],
    });
    const infer = await timeRuns(
      async () => {
        const res = await fetch(`${srv.url}/v2/models/${MODEL}/infer`, {
          method: 'POST',
          body,
          headers: { 'content-type': 'application/json' },
        });
        await res.arrayBuffer();
      },
      WARMUP,
      RUNS,
    );
    // Local vs remote on the same image: the Haar cascade (same thread, no HTTP) against the remote call.
    const cascade = parseHaarCascade(await readFile(resolve(process.cwd(), 'public/models/haarcascade_frontalface_alt2.xml'), 'utf8'));
    const gray = rgbToGray(rgb);
    const localFaces = detectMultiScale(cascade, gray).length;
    const local = await timeRuns(async () => detectMultiScale(cascade, gray), WARMUP, RUNS);
    return [
      {
        name: `local vs remote detection, same 640x480 image (local Haar: ${localFaces} faces, remote FaceBoxes: ${faces})`,
        unit: 'ms',
        lookout: detect,
        reference: local,
        referenceName: 'local Haar cascade (alt2, scaleFactor 1.1, minNeighbors 5)',
        ratio: detect / local,
      },
      {
        name: `remote detect, 640x480 over HTTP to the in-process model server (FaceBoxes, tfjs WASM; ${faces} faces)`,
        unit: 'ms',
        lookout: detect,
        reference: infer,
        referenceName: 'bare V2 infer call with a pre-built body',
        ratio: detect / infer,
        goal: 'client overhead small: ratio <= 1.5',
      },
    ];
  } finally {
    await srv.close();
  }
}
