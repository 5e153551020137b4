/**
 * #27 §1, the remote detector's part of a training feature's version: the boxes Lookout kept for each image were
 * made by the model the model server served then. When a new version of that model is deployed under the same name
 * (and URL), the kept boxes are another detector's: the next training recomputes every image, and reuses them
 * again after. Two of Lookout's own KServe V2 model servers on 127.0.0.1 (versions 1 and 2) stand behind one
 * address, a plain HTTP forwarder, as a deployment would put a new version behind the same service.
 */
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeFeatures } from '../../server/storage/feature-store.js';
import { listenModelServer, type RunningModelServer } from '../../server/model-server/app.js';
import { trainingCaptures } from '../helpers/faces.js';
import { IN_PROCESS_MODEL_SERVER_ENV } from '../helpers/model-server-env.js';
import { getJson, postJson, startTestServer, type TestServer, uploadImage } from '../helpers/test-server.js';

const ENV = IN_PROCESS_MODEL_SERVER_ENV;

describe('the remote detector: a new version of the served model', () => {
  const servers: RunningModelServer[] = [];
  let deployed: RunningModelServer;
  let front: http.Server;
  let lookout: TestServer;
  let dataDir: string;

  beforeAll(async () => {
    servers.push(await listenModelServer({ port: 0, host: '127.0.0.1' }));
    servers.push(await listenModelServer({ port: 0, host: '127.0.0.1', version: '2' }));
    deployed = servers[0];
    // One address for Lookout, forwarding each request to the model server deployed now.
    front = http.createServer((req, res) => {
      const upstream = http.request(
        {
          host: '127.0.0.1',
          port: deployed.port,
          path: req.url,
          method: req.method,
          headers: { ...req.headers, host: `127.0.0.1:${deployed.port}` },
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', () => res.writeHead(502).end());
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-remote-features-'));
    lookout = await startTestServer({ ...ENV, REMOTE_DETECTOR_URL: `http://127.0.0.1:${(front.address() as AddressInfo).port}` }, dataDir);
    for (const deadline = Date.now() + 60_000; (await getJson(`${lookout.url}/api/ready`)).body.remote_status !== 'connected'; ) {
      if (Date.now() > deadline) throw new Error('the model server did not connect');
      await new Promise((r) => setTimeout(r, 100));
    }
    const switched = await getJson(`${lookout.url}/api/models/detection`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ detection_method: 'remote' }),
    });
    expect(switched.status).toBe(200);
    for (const person of ['grace', 'eileen'] as const) {
      for (const capture of await trainingCaptures(person)) expect((await uploadImage(lookout.url, person, capture)).status).toBe(200);
    }
  }, 180_000);

  afterAll(async () => {
    await lookout?.close();
    await new Promise((resolve) => front?.close(resolve));
    for (const server of servers) await server.close();
    if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
  });

  const train = async () => {
    const { status, body } = await postJson(`${lookout.url}/api/train`, {});
    expect(status, JSON.stringify(body)).toBe(200);
    return body.features;
  };
  const keptDetectors = async () => {
    const out = new Set<string>();
    for (const label of await fs.readdir(path.join(dataDir, 'features'))) {
      for (const name of await fs.readdir(path.join(dataDir, 'features', label))) {
        out.add(decodeFeatures(await fs.readFile(path.join(dataDir, 'features', label, name))).detector);
      }
    }
    return [...out];
  };

  it('recomputes every image once version 2 serves, and reuses them after; each feature names its version', async () => {
    const first = await train();
    const images = first.computed;
    expect(images).toBeGreaterThan(0);
    expect(first).toMatchObject({ reused: 0, detections: images });
    expect(await train()).toMatchObject({ reused: images, computed: 0 });
    const [v1] = await keptDetectors();
    expect(v1).toMatch(/^remote:.*\|1\|/);

    deployed = servers[1];
    expect(await train()).toMatchObject({ reused: 0, computed: images, detections: images });
    const [v2, ...others] = await keptDetectors();
    expect(others).toEqual([]);
    expect(v2).toMatch(/^remote:.*\|2\|/);
    expect(v2.replace('|2|', '|1|')).toBe(v1);
    expect(await train()).toMatchObject({ reused: images, computed: 0 });
  }, 300_000);

  it('a training with the model server away fails and keeps the model and every feature', async () => {
    const before = await keptDetectors();
    const model = await fs.readFile(path.join(dataDir, 'models', 'training.lbph'));
    const away = deployed;
    deployed = { ...away, port: 1 } as RunningModelServer; // the forwarder answers 502, as a proxy before a dead backend
    try {
      const { status, body } = await postJson(`${lookout.url}/api/train`, {});
      expect(status).toBe(503);
      expect(body.error.code).toBe('remote_unavailable');
    } finally {
      deployed = away;
    }
    expect(await keptDetectors()).toEqual(before);
    expect((await fs.readFile(path.join(dataDir, 'models', 'training.lbph'))).equals(model)).toBe(true);
  }, 120_000);
});
