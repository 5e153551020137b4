/**
 * The typed client of shared/api/client.ts (what the web app and integrators use) against the real server:
 * docs/api.md's flow (upload, train, recognize, results), errors as LookoutError, URLs with parameters.
 */
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import {
  createLookoutClient,
  LookoutError,
  type FaceResult,
  type ReadyResponse,
  type RecognizeResponse,
  type RequestOf,
  type ResponseOf,
  type TrainResponse,
} from '../../shared/api/index.js';
import { base64, photo, trainingCaptures } from '../helpers/faces.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

let server: TestServer;
let lookout: ReturnType<typeof createLookoutClient>;

beforeAll(async () => {
  server = await startTestServer({ WORKERS: '1', EMBEDDING_ENABLED: 'false', OBJECT_DETECTION_ENABLED: 'false', CHAT_ENABLED: 'false' });
  lookout = createLookoutClient({ baseUrl: `${server.url}/` });
});
afterAll(async () => {
  await server?.close();
});

describe('createLookoutClient', () => {
  it('takes its types from the route table (checked by tsc)', () => {
    expectTypeOf<ResponseOf<'recognize'>>().toEqualTypeOf<RecognizeResponse>();
    expectTypeOf<ResponseOf<'train'>>().toEqualTypeOf<TrainResponse>();
    // /api/ready's 503 carries the same body; only 2xx answers are results of `call`.
    expectTypeOf<ResponseOf<'ready'>>().toEqualTypeOf<ReadyResponse>();
    expectTypeOf<RequestOf<'labelImages'>>().toEqualTypeOf<{ params: { label: string } }>();
    expectTypeOf<RequestOf<'recognize'>['body']>().toEqualTypeOf<{
      image: string;
      recognition_model?: 'lbph' | 'embedding' | 'dlib';
      // #26 sightings
      source?: 'api' | 'page' | 'camera';
      camera?: string;
    }>();
    expectTypeOf<FormData>().toExtend<RequestOf<'uploadImage'>['body']>();
  });

  it('uploads (multipart and JSON), trains and recognises, typed from the route table', async () => {
    const captures = await trainingCaptures('grace');
    for (const [i, bytes] of captures.entries()) {
      const form = new FormData();
      form.set('label', 'Grace Hopper');
      form.set('file', new Blob([new Uint8Array(bytes)], { type: 'image/jpeg' }), `grace-${i}.jpg`);
      const stored = await lookout.call('uploadImage', { body: form });
      expect(stored).toMatchObject({ status: 'ok', label: 'grace-hopper' });
    }
    const json = await lookout.call('uploadImage', {
      body: { label: 'Grace Hopper', image: base64(captures[0]), capture_id: 'capture-0001' },
    });
    expect(json.duplicate).toBe(false);

    const trained = await lookout.call('train');
    expect(trained.labels).toEqual(['grace-hopper']);
    const { faces, count } = await lookout.call('recognize', { body: { image: base64(await photo('grace')) } });
    const best: FaceResult = faces[0];
    expect(count).toBe(1);
    expect(best.label).toBe('grace-hopper');

    const images = await lookout.call('labelImages', { params: { label: 'grace-hopper' } });
    expect(images.count).toBe(captures.length + 1);
    const file = await fetch(lookout.url('imageFile', { params: { label: 'grace-hopper', filename: images.files[0].filename } }));
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toMatch(/^image\//);
  });

  it('sends the query of GET /api/results', async () => {
    await lookout.call('storeResults', {
      body: { results: [{ id: 'record-0001', kind: 'objects', captured_at: new Date().toISOString(), engine: 'browser', objects: [] }] },
    });
    const list = await lookout.call('results', { query: { limit: 1, kind: 'objects' } });
    expect(list.count).toBe(1);
    expect(lookout.url('results', { query: { limit: 5, kind: 'recognition' } })).toBe(`${server.url}/api/results?limit=5&kind=recognition`);
  });

  it("throws a LookoutError with the API's status, code and message", async () => {
    const refused = await lookout.call('recognize', { body: { image: 'not base64!!' } }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(LookoutError);
    expect(refused).toMatchObject({ status: 400, code: 'invalid_image' });
    expect((refused as LookoutError).body?.error.code).toBe('invalid_image');
    const missing = await lookout.call('deleteLabel', { params: { label: 'nobody' } }).catch((e: unknown) => e);
    expect(missing).toMatchObject({ status: 404, code: 'label_not_found' });
  });

  it('says `network` when the server cannot be reached', async () => {
    const nowhere = createLookoutClient({ baseUrl: 'http://127.0.0.1:9' });
    await expect(nowhere.call('health')).rejects.toMatchObject({ status: 0, code: 'network' });
  });
});
