/**
 * The model server over real HTTP on 127.0.0.1: OVMS's shapes for health, descriptor and /v1/config, real
 * FaceBoxes inference on test photos, OVMS-style errors, and the LOADING state before the model is in.
 */
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RgbImage } from '../../shared/image/types.js';
import { parseSsdDetections, ssdInput } from '../../shared/vision/ssd-face.js';
import { listenModelServer, type RunningModelServer } from './app.js';
import type { SsdBackend } from './faceboxes.js';

const MODEL = 'face-detection-retail-0005';
const testdata = path.resolve(process.cwd(), 'test/fixtures/images');

async function rgb(file: string): Promise<RgbImage> {
  const { data, info } = await sharp(path.join(testdata, file)).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, channels: 3, data: new Uint8Array(data) };
}

const inferBody = (data: ArrayLike<number>, over: Record<string, unknown> = {}) =>
  JSON.stringify({ inputs: [{ name: 'input.1', shape: [1, 3, 300, 300], datatype: 'FP32', data: Array.from(data), ...over }] });

describe('model server (FaceBoxes behind face-detection-retail-0005)', () => {
  let srv: RunningModelServer;
  const get = (p: string) => fetch(srv.url + p);
  const post = (p: string, body: string) => fetch(srv.url + p, { method: 'POST', body, headers: { 'content-type': 'application/json' } });

  beforeAll(async () => {
    srv = await listenModelServer();
    expect(await srv.server.loaded).toBe(true);
  });
  afterAll(async () => srv?.close());

  it('answers the KServe health probes', async () => {
    for (const p of ['/v2/health/live', '/v2/health/ready', `/v2/models/${MODEL}/ready`, `/v2/models/${MODEL}/versions/1/ready`]) {
      const res = await get(p);
      expect(res.status, p).toBe(200);
      expect(await res.json()).toEqual({});
    }
  });

  it('describes the model with the real model contract', async () => {
    const res = await get(`/v2/models/${MODEL}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      name: MODEL,
      versions: ['1'],
      platform: 'OpenVINO',
      inputs: [{ name: 'input.1', datatype: 'FP32', shape: [1, 3, 300, 300] }],
      outputs: [{ name: '527', datatype: 'FP32', shape: [1, 1, 200, 7] }],
    });
  });

  it('reports the model AVAILABLE in /v1/config', async () => {
    expect(await (await get('/v1/config')).json()).toEqual({
      [MODEL]: { model_version_status: [{ version: '1', state: 'AVAILABLE', status: { error_code: 'OK', error_message: 'OK' } }] },
    });
  });

  it('answers unknown models, versions and paths with OVMS errors', async () => {
    const cases: [string, number, string][] = [
      ['/v2/models/resnet', 404, 'Model with requested name is not found'],
      ['/v2/models/resnet/ready', 404, 'Model with requested name is not found'],
      [`/v2/models/${MODEL}/versions/2`, 404, 'Model with requested version is not found'],
      [`/v2/models/${MODEL}/versions/x/ready`, 400, 'Could not parse model version in request'],
      ['/v2/nothing', 404, 'Requested REST resource not found'],
    ];
    for (const [p, status, error] of cases) {
      const res = await get(p);
      expect(res.status, p).toBe(status);
      expect(await res.json(), p).toEqual({ error });
    }
    const res = await post('/v2/models/resnet/infer', inferBody(new Float32Array(270000)));
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: 'Model with requested name is not found' });
  });

  it('finds the face in grace_hopper.jpg and lays the output out as OVMS does', async () => {
    const img = await rgb('faces/grace_hopper.jpg');
    const res = await post(
      `/v2/models/${MODEL}/infer`,
      JSON.stringify({ id: 'req-7', inputs: JSON.parse(inferBody(ssdInput(img, { width: 300, height: 300 }))).inputs }),
    );
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      model_name: string;
      model_version: string;
      id: string;
      outputs: { name: string; shape: number[]; datatype: string; data: number[] }[];
    };
    expect(body.model_name).toBe(MODEL);
    expect(body.model_version).toBe('1');
    expect(body.id).toBe('req-7');
    expect(body.outputs).toHaveLength(1);
    const out = body.outputs[0];
    expect(out).toMatchObject({ name: '527', shape: [1, 1, 200, 7], datatype: 'FP32' });
    expect(out.data).toHaveLength(1400);
    // Rows sorted by confidence, label 1, coordinates normalised; FaceBoxes fills all 200 rows here.
    for (let r = 0; r < 200; r++) {
      expect(out.data[r * 7]).toBe(0);
      expect(out.data[r * 7 + 1]).toBe(1);
      if (r > 0) expect(out.data[r * 7 + 2]).toBeLessThanOrEqual(out.data[(r - 1) * 7 + 2]);
      for (let k = 3; k < 7; k++) {
        expect(out.data[r * 7 + k]).toBeGreaterThanOrEqual(0);
        expect(out.data[r * 7 + k]).toBeLessThanOrEqual(1);
      }
    }
    const faces = parseSsdDetections(out.data, img.width, img.height, 0.5);
    expect(faces).toHaveLength(1);
    // Her face: OpenCV's Haar box is [145, 99, 239, 239]; its centre must fall inside ours.
    const f = faces[0];
    expect(f.x).toBeLessThan(145 + 120);
    expect(f.x + f.width).toBeGreaterThan(145 + 120);
    expect(f.y).toBeLessThan(99 + 120);
    expect(f.y + f.height).toBeGreaterThan(99 + 120);
  });

  it.each([
    ['faces/astronaut.png', 1],
    ['faces/sample5.jpg', 5],
  ])('finds the faces in %s', async (file, count) => {
    const img = await rgb(file);
    const res = await post(`/v2/models/${MODEL}/infer`, inferBody(ssdInput(img, { width: 300, height: 300 })));
    const out = ((await res.json()) as { outputs: { data: number[] }[] }).outputs[0];
    expect(parseSsdDetections(out.data, img.width, img.height, 0.5)).toHaveLength(count);
  });

  it('ends the detections with an image_id -1 row and zeros when fewer than 200 are kept', async () => {
    const strict = await listenModelServer({ minScore: 0.5 });
    try {
      await strict.server.loaded;
      const img = await rgb('faces/grace_hopper.jpg');
      const res = await fetch(`${strict.url}/v2/models/${MODEL}/infer`, {
        method: 'POST',
        body: inferBody(ssdInput(img, { width: 300, height: 300 })),
      });
      const data = ((await res.json()) as { outputs: { data: number[] }[] }).outputs[0].data;
      expect(data).toHaveLength(1400);
      expect(data[2]).toBeGreaterThan(0.5);
      expect(data[7]).toBe(-1);
      expect(data.slice(8).every((v) => v === 0)).toBe(true);
    } finally {
      await strict.close();
    }
  });

  it('accepts nested data, as KServe allows', async () => {
    const flat = Array.from(new Float32Array(270000).fill(128));
    const nested = [0, 1, 2].map((c) => Array.from({ length: 300 }, (_, y) => flat.slice((c * 300 + y) * 300, (c * 300 + y + 1) * 300)));
    const res = await post(
      `/v2/models/${MODEL}/infer`,
      JSON.stringify({ inputs: [{ name: 'input.1', shape: [1, 3, 300, 300], datatype: 'FP32', data: [nested] }] }),
    );
    expect(res.status).toBe(200);
  });

  it.each([
    ['{"inputs": [', 412, 'The file is not valid json'],
    ['[1, 2]', 400, 'Request body should be JSON object'],
    ['{}', 400, 'Invalid JSON structure, missing inputs'],
    ['{"inputs": []}', 400, 'Invalid JSON structure, missing inputs'],
    [
      '{"inputs": [{"name": "input.1", "shape": [1, 3, 300, 300], "datatype": "FP32", "data": ["a"]}]}',
      400,
      'Could not parse input content. Not valid ndarray detected',
    ],
    [inferBody([1, 2], { name: 'data' }), 400, 'Missing input with specific name - Required input: input.1'],
    [
      JSON.stringify({ inputs: [JSON.parse(inferBody([1]))['inputs'][0], { ...JSON.parse(inferBody([1]))['inputs'][0], name: 'x' }] }),
      400,
      'Invalid number of inputs - Expected: 1; Actual: 2',
    ],
    [
      inferBody([1], { shape: [1, 3, 0, 300] }),
      400,
      'Invalid input shape - Negative or zero dimension size is not acceptable: (1,3,0,300); input name: input.1',
    ],
    [inferBody([1], { datatype: 'UINT8' }), 400, 'Invalid input precision - Expected: FP32; Actual: UINT8; input name: input.1'],
    [
      inferBody([1], { shape: [3, 300, 300] }),
      400,
      'Invalid number of shape dimensions - Expected: (1,3,300,300); Actual: (3,300,300); input name: input.1',
    ],
    [inferBody([1], { shape: [2, 3, 300, 300] }), 400, 'Invalid input batch size - Expected: 1; Actual: 2; input name: input.1'],
    [
      inferBody([1], { shape: [1, 3, 224, 224] }),
      400,
      'Invalid input shape - Expected: (1,3,300,300); Actual: (1,3,224,224); input name: input.1',
    ],
    [
      inferBody([1, 2, 3]),
      400,
      'Invalid number of values in tensor proto container - Expected: 270000 values; Actual: 3 values; input name: input.1',
    ],
  ])('refuses %s', async (body, status, error) => {
    const res = await post(`/v2/models/${MODEL}/infer`, body);
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    expect(await res.json()).toEqual({ error });
  });

  it('refuses an unknown requested output', async () => {
    const body = JSON.parse(inferBody(new Float32Array(270000))) as Record<string, unknown>;
    const res = await post(`/v2/models/${MODEL}/infer`, JSON.stringify({ ...body, outputs: [{ name: 'detection_out' }] }));
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: 'Missing output with specific name - Required output: detection_out' });
  });
});

describe('model server while the model loads', () => {
  const fakeBackend: SsdBackend = {
    async infer(_input, _w, _h, max) {
      const rows = new Float32Array(max * 7);
      rows[0] = -1;
      return rows;
    },
    dispose() {},
  };

  it('reports LOADING and answers 503 until the model is AVAILABLE', async () => {
    let release!: (b: SsdBackend) => void;
    const srv = await listenModelServer({ loadBackend: () => new Promise<SsdBackend>((r) => (release = r)) });
    try {
      const config = (await (await fetch(`${srv.url}/v1/config`)).json()) as Record<string, { model_version_status: { state: string }[] }>;
      expect(config[MODEL].model_version_status[0].state).toBe('LOADING');
      expect((await fetch(`${srv.url}/v2/health/live`)).status).toBe(200);
      for (const p of ['/v2/health/ready', `/v2/models/${MODEL}/ready`, `/v2/models/${MODEL}`]) {
        expect((await fetch(srv.url + p)).status, p).toBe(503);
      }
      const res = await fetch(`${srv.url}/v2/models/${MODEL}/infer`, { method: 'POST', body: inferBody(new Float32Array(270000)) });
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({ error: 'Model with requested version is not loaded yet' });

      release(fakeBackend);
      expect(await srv.server.loaded).toBe(true);
      expect((await fetch(`${srv.url}/v2/models/${MODEL}/ready`)).status).toBe(200);
      const after = (await (await fetch(`${srv.url}/v1/config`)).json()) as typeof config;
      expect(after[MODEL].model_version_status[0].state).toBe('AVAILABLE');
    } finally {
      await srv.close();
    }
  });

  it('stays LOADING with an error code when loading fails, and serves another name when asked', async () => {
    const srv = await listenModelServer({ modelName: 'faces', loadBackend: () => Promise.reject(new Error('no weights')) });
    try {
      expect(await srv.server.loaded).toBe(false);
      expect(srv.server.state()).toBe('FAILED');
      expect(await (await fetch(`${srv.url}/v1/config`)).json()).toEqual({
        faces: { model_version_status: [{ version: '1', state: 'LOADING', status: { error_code: 'UNKNOWN', error_message: 'UNKNOWN' } }] },
      });
      expect((await fetch(`${srv.url}/v2/models/faces/ready`)).status).toBe(503);
      expect((await fetch(`${srv.url}/v2/models/${MODEL}/ready`)).status).toBe(404);
    } finally {
      await srv.close();
    }
  });
});
