/**
 * The remote engine over real HTTP on 127.0.0.1: against Lookout's model server (faces found where OpenCV finds
 * them), and against small misbehaving servers (down, slow, malformed, wrong shapes) that must each give a
 * distinct `remote_unavailable`.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { serve, type ServerType } from '@hono/node-server';
import { Hono } from 'hono';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Rect, RgbImage } from '../../../shared/image/types.js';
import { iou } from '../../../shared/vision/ssd-face.js';
import { ApiError } from '../../http/errors.js';
import { listenModelServer, type RunningModelServer } from '../../model-server/app.js';
import type { SsdBackend } from '../../model-server/faceboxes.js';
import { RemoteDetector } from './remote-detector.js';

const MODEL = 'face-detection-retail-0005';
const testdata = path.resolve(process.cwd(), 'test/fixtures/images');
const fixtures = JSON.parse(fs.readFileSync(path.resolve(process.cwd(), 'test/fixtures/opencv/cascade/boxes.json'), 'utf8')) as {
  images: { image: string; downscaled: boolean }[];
  runs: { params: string; image: string; boxes: number[][] }[];
};

/**
 * OpenCV Haar boxes (default parameters) that are real frontal faces, by index; the others are Haar false
 * positives checked by eye (sample1 #0 a badge, sample5 #0 the stair rail, #6 a torso).
 */
const FRONTAL: Record<string, { faces: number[]; count: number }> = {
  'faces/astronaut.png': { faces: [0], count: 1 },
  'faces/grace_hopper.jpg': { faces: [0], count: 1 },
  'faces/messi5.jpg': { faces: [0], count: 1 },
  'faces/sample1.jpg': { faces: [1], count: 3 },
  'faces/sample2.jpg': { faces: [0], count: 3 },
  'faces/sample5.jpg': { faces: [1, 2, 3, 4, 5], count: 5 },
};

/** OpenCV's boxes in pixels of the full-size photo (the fixture halved images wider than 1000 px). */
function opencvBoxes(image: string): Rect[] {
  const scale = fixtures.images.find((i) => i.image === image)!.downscaled ? 2 : 1;
  const run = fixtures.runs.find((r) => r.params === 'defaults' && r.image === image)!;
  return run.boxes.map(([x, y, w, h]) => ({ x: x * scale, y: y * scale, width: w * scale, height: h * scale }));
}

async function rgb(file: string): Promise<RgbImage> {
  const { data, info } = await sharp(path.join(testdata, file)).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, channels: 3, data: new Uint8Array(data) };
}

const tiny: RgbImage = { width: 4, height: 4, channels: 3, data: new Uint8Array(48).fill(100) };

const DESCRIPTOR = {
  name: MODEL,
  versions: ['1'],
  platform: 'OpenVINO',
  inputs: [{ name: 'input.1', datatype: 'FP32', shape: [1, 3, 300, 300] }],
  outputs: [{ name: '527', datatype: 'FP32', shape: [1, 1, 200, 7] }],
};
const AVAILABLE = {
  [MODEL]: { model_version_status: [{ version: '1', state: 'AVAILABLE', status: { error_code: 'OK', error_message: 'OK' } }] },
};

/** A scripted V2 server on 127.0.0.1 for the failure cases. */
async function fakeServer(setup: (app: Hono) => void): Promise<{ url: string; close(): Promise<void> }> {
  const app = new Hono();
  setup(app);
  let http!: ServerType;
  const port = await new Promise<number>((resolve) => {
    http = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => resolve(info.port));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        http.close(() => resolve());
        (http as { closeAllConnections?: () => void }).closeAllConnections?.();
      }),
  };
}

/** A port with nothing listening on it. */
async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

async function remoteError(p: Promise<unknown>): Promise<ApiError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  const api = err as ApiError;
  expect(api.code).toBe('remote_unavailable');
  expect(api.status).toBe(503);
  return api;
}

describe('RemoteDetector against the Lookout model server', () => {
  let srv: RunningModelServer;
  let remote: RemoteDetector;

  beforeAll(async () => {
    srv = await listenModelServer();
    await srv.server.loaded;
    remote = new RemoteDetector(srv.url, MODEL, 0.5, 10_000);
  });
  afterAll(async () => srv?.close());

  it('reads the contract from the descriptor', async () => {
    expect(await remote.descriptor()).toEqual({
      inputName: 'input.1',
      inputDatatype: 'FP32',
      inputShape: [1, 3, 300, 300],
      width: 300,
      height: 300,
      outputName: '527',
    });
  });

  it.each(Object.keys(FRONTAL))('finds the faces of %s where OpenCV finds them (IoU >= 0.5)', async (image) => {
    const img = await rgb(image);
    const found = await remote.detectWithScores(img);
    const { faces, count } = FRONTAL[image];
    expect(found).toHaveLength(count);
    for (const b of found) {
      expect(b.confidence).toBeGreaterThanOrEqual(0.5);
      expect(b.x).toBeGreaterThanOrEqual(0);
      expect(b.y).toBeGreaterThanOrEqual(0);
      expect(b.x + b.width).toBeLessThanOrEqual(img.width);
      expect(b.y + b.height).toBeLessThanOrEqual(img.height);
    }
    const cv = opencvBoxes(image);
    for (const i of faces) {
      const best = Math.max(...found.map((b) => iou(b, cv[i])));
      expect(best, `OpenCV box ${i} [${Object.values(cv[i])}]`).toBeGreaterThanOrEqual(0.5);
    }
  });

  it('returns plain rectangles from detect()', async () => {
    const boxes = await remote.detect(await rgb('faces/astronaut.png'));
    expect(boxes).toHaveLength(1);
    expect(Object.keys(boxes[0]).sort()).toEqual(['height', 'width', 'x', 'y']);
  });

  it('reports connected', async () => {
    expect(await remote.checkStatus()).toBe('connected');
    expect(remote.statusDetail).toBeNull();
  });

  it('reports an unknown model as model_not_ready and fails detection with the server error', async () => {
    const other = new RemoteDetector(srv.url, 'person-detection', 0.5, 5000);
    expect(await other.checkStatus()).toBe('model_not_ready');
    expect(other.statusDetail).toMatch(/does not serve model "person-detection" \(it serves: face-detection-retail-0005\)/);
    const err = await remoteError(other.detect(tiny));
    expect(err.message).toBe(
      'The remote model server answered HTTP 404 to the descriptor request for model "person-detection": Model with requested name is not found.',
    );
  });
});

describe('RemoteDetector failures', () => {
  it('server down: connection refused', async () => {
    const remote = new RemoteDetector(`http://127.0.0.1:${await closedPort()}`, MODEL, 0.5, 2000);
    const err = await remoteError(remote.detect(tiny));
    expect(err.message).toMatch(
      /^The remote model server at http:\/\/127\.0\.0\.1:\d+ refused the connection for the descriptor request .*is it running\?$/,
    );
    expect(await remote.checkStatus()).toBe('unreachable');
    expect(remote.statusDetail).toMatch(/refused the connection/);
  });

  it('slow server: times out', async () => {
    const slow = await fakeServer((app) => {
      app.get('/v2/models/:name', async (c) => {
        await new Promise((r) => setTimeout(r, 1500));
        return c.json(DESCRIPTOR);
      });
      app.get('/v1/config', async (c) => {
        await new Promise((r) => setTimeout(r, 1500));
        return c.json(AVAILABLE);
      });
    });
    try {
      const remote = new RemoteDetector(slow.url, MODEL, 0.5, 200);
      const t0 = Date.now();
      const err = await remoteError(remote.detect(tiny));
      expect(Date.now() - t0).toBeLessThan(1200);
      expect(err.message).toBe(
        `The remote model server at ${slow.url} did not answer the descriptor request for model "${MODEL}" within 200 ms.`,
      );
      expect(await remote.checkStatus()).toBe('unreachable');
      expect(remote.statusDetail).toMatch(/did not answer the model status request within 200 ms/);
    } finally {
      await slow.close();
    }
  });

  /** A server with a good descriptor and config whose infer answer is scripted. */
  async function withInfer(
    answer: (c: import('hono').Context) => Response | Promise<Response>,
    run: (remote: RemoteDetector) => Promise<void>,
  ) {
    const srv = await fakeServer((app) => {
      app.get('/v2/models/:name', (c) => c.json(DESCRIPTOR));
      app.get('/v1/config', (c) => c.json(AVAILABLE));
      app.post('/v2/models/:name/infer', answer);
    });
    try {
      await run(new RemoteDetector(srv.url, MODEL, 0.5, 2000));
    } finally {
      await srv.close();
    }
  }

  const output = (over: Record<string, unknown>) => ({
    model_name: MODEL,
    model_version: '1',
    outputs: [{ name: '527', datatype: 'FP32', shape: [1, 1, 200, 7], data: new Array(1400).fill(0), ...over }],
  });

  it.each([
    [
      'malformed JSON',
      (c: import('hono').Context) => c.body('{"outputs": [', 200, { 'content-type': 'application/json' }),
      /^The remote model server sent malformed JSON in reply to the inference request for model "face-detection-retail-0005"\.$/,
    ],
    [
      'an HTTP error',
      (c: import('hono').Context) => c.json({ error: 'Internal inference error' }, 500),
      /^The remote model server answered HTTP 500 to the inference request for model "face-detection-retail-0005": Internal inference error\.$/,
    ],
    [
      'a non-V2 body',
      (c: import('hono').Context) => c.json({ detections: [] }),
      /^The remote model server sent an invalid inference response \(/,
    ],
    [
      'a wrong output shape',
      (c: import('hono').Context) => c.json(output({ shape: [1, 1, 200, 6], data: new Array(1200).fill(0) })),
      /output "527" has shape \[1,1,200,6\], expected rows of 7 values/,
    ],
    [
      'a wrong datatype',
      (c: import('hono').Context) => c.json(output({ datatype: 'FP16' })),
      /output "527" has datatype FP16, expected FP32/,
    ],
    [
      'a short data array',
      (c: import('hono').Context) => c.json(output({ data: new Array(700).fill(0) })),
      /output "527" holds 700 values but its shape \[1,1,200,7\] needs 1400/,
    ],
    [
      'a missing output',
      (c: import('hono').Context) => c.json(output({ name: 'detection_out' })),
      /has no output "527" \(got "detection_out"\)/,
    ],
  ])('infer answering %s', async (_label, answer, message) => {
    await withInfer(answer, async (remote) => {
      const err = await remoteError(remote.detect(tiny));
      expect(err.message).toMatch(message);
    });
  });

  it('sends the tensor the descriptor asks for and maps boxes back to the submitted image', async () => {
    let seen: { name: string; shape: number[]; datatype: string; data: number[] } | undefined;
    const rows = new Array(1400).fill(0);
    rows.splice(0, 14, 0, 1, 0.9, 0.25, 0.5, 0.75, 1.1, -1, 0, 0, 0, 0, 0, 0);
    const srv = await fakeServer((app) => {
      app.get('/v2/models/:name', (c) =>
        c.json({
          ...DESCRIPTOR,
          inputs: [{ name: 'data', datatype: 'FP32', shape: [-1, 3, -1, -1] }],
          outputs: [{ name: 'detection_out', datatype: 'FP32', shape: [1, 1, -1, 7] }],
        }),
      );
      app.post('/v2/models/:name/infer', async (c) => {
        seen = ((await c.req.json()) as { inputs: (typeof seen)[] }).inputs[0];
        return c.json({ model_name: MODEL, outputs: [{ name: 'detection_out', datatype: 'FP32', shape: [1, 1, 200, 7], data: rows }] });
      });
    });
    try {
      const img: RgbImage = { width: 200, height: 100, channels: 3, data: new Uint8Array(200 * 100 * 3).fill(7) };
      const boxes = await new RemoteDetector(srv.url, MODEL, 0.5, 2000).detect(img);
      expect(seen!.name).toBe('data');
      expect(seen!.shape).toEqual([1, 3, 300, 300]);
      expect(seen!.datatype).toBe('FP32');
      expect(seen!.data).toHaveLength(270000);
      expect(seen!.data.every((v) => v === 7)).toBe(true);
      expect(boxes).toEqual([{ x: 50, y: 50, width: 100, height: 50 }]);
    } finally {
      await srv.close();
    }
  });

  it('refuses a descriptor that is not an SSD detector', async () => {
    const srv = await fakeServer((app) => {
      app.get('/v2/models/:name', (c) =>
        c.json({ ...DESCRIPTOR, inputs: [{ name: 'input.1', datatype: 'FP32', shape: [1, 300, 300, 3] }] }),
      );
      app.get('/v1/config', (c) => c.json(AVAILABLE));
    });
    try {
      const remote = new RemoteDetector(srv.url, MODEL, 0.5, 2000);
      const err = await remoteError(remote.detect(tiny));
      expect(err.message).toMatch(
        /is not an SSD face detector this engine can use: input "input.1" has shape \[1,300,300,3\], expected 3 channels/,
      );
      expect(await remote.checkStatus()).toBe('model_not_ready');
    } finally {
      await srv.close();
    }
  });

  it('refuses a descriptor body that is not a V2 descriptor', async () => {
    const srv = await fakeServer((app) => app.get('/v2/models/:name', (c) => c.json({ model: MODEL })));
    try {
      const err = await remoteError(new RemoteDetector(srv.url, MODEL, 0.5, 2000).detect(tiny));
      expect(err.message).toMatch(/^The remote model server sent an invalid descriptor for model "face-detection-retail-0005" \(/);
    } finally {
      await srv.close();
    }
  });
});

describe('RemoteDetector.checkStatus', () => {
  it('reports model_not_ready while the model loads, then connected', async () => {
    let release!: (b: SsdBackend) => void;
    const srv = await listenModelServer({ loadBackend: () => new Promise<SsdBackend>((r) => (release = r)) });
    try {
      const remote = new RemoteDetector(srv.url, MODEL, 0.5, 2000);
      expect(await remote.checkStatus()).toBe('model_not_ready');
      expect(remote.statusDetail).toBe(`Model "${MODEL}" on the remote model server has no AVAILABLE version (1: LOADING).`);
      release({ infer: async (_i, _w, _h, max) => new Float32Array(max * 7), dispose() {} });
      await srv.server.loaded;
      expect(await remote.checkStatus()).toBe('connected');
    } finally {
      await srv.close();
    }
  });

  it('falls back to the V2 ready endpoint on servers without /v1/config', async () => {
    let ready = false;
    const srv = await fakeServer((app) => {
      app.get('/v2/models/:name/ready', (c) => (ready ? c.body(null, 200) : c.json({ error: 'not ready' }, 503)));
      app.get('/v2/models/:name', (c) => c.json(DESCRIPTOR));
    });
    try {
      const remote = new RemoteDetector(srv.url, MODEL, 0.5, 2000);
      expect(await remote.checkStatus()).toBe('model_not_ready');
      ready = true;
      expect(await remote.checkStatus()).toBe('connected');
    } finally {
      await srv.close();
    }
  });

  it('reports unreachable for a server that answers /v1/config with garbage', async () => {
    const srv = await fakeServer((app) => app.get('/v1/config', (c) => c.text('<html>proxy error</html>')));
    try {
      const remote = new RemoteDetector(srv.url, MODEL, 0.5, 2000);
      expect(await remote.checkStatus()).toBe('unreachable');
      expect(remote.statusDetail).toMatch(/malformed JSON in reply to the model status request/);
    } finally {
      await srv.close();
    }
  });

  it('validates its arguments', () => {
    expect(() => new RemoteDetector('ftp://x', MODEL)).toThrow(/http or https/);
    expect(() => new RemoteDetector('not a url', MODEL)).toThrow(/not a valid URL/);
    expect(() => new RemoteDetector('http://x', MODEL, 2)).toThrow(RangeError);
    expect(new RemoteDetector('http://x:9000/', MODEL).url).toBe('http://x:9000');
  });
});
