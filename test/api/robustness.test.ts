/**
 * Bad input and concurrency over real HTTP: every case gets a clear 4xx with the error body, never a 500,
 * stored files stay intact, and the server keeps answering.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashTree } from '../helpers/data-dir-files.js';
import { base64, photo, trainingCaptures } from '../helpers/faces.js';
import { getJson, postJson, readTestImage, startTestServer, uploadImage, type TestServer } from '../helpers/test-server.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ MAX_BODY_BYTES: String(2 * 1024 * 1024) });
});
afterAll(async () => {
  await server?.close();
});

function expectError(res: { status: number; body: any }, status: number, code: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.error.code).toBe(code);
  expect(typeof res.body.error.message).toBe('string');
  expect(res.body.error.message.length).toBeGreaterThan(10);
}

describe('bad images', () => {
  it('bad base64 is a 400', async () => {
    expectError(await postJson(`${server.url}/api/recognize`, { image: 'this is not base64!!' }), 400, 'invalid_image');
  });

  it('a non-image is a 400', async () => {
    expectError(
      await postJson(`${server.url}/api/recognize`, { image: Buffer.from('hello, I am a text file').toString('base64') }),
      400,
      'invalid_image',
    );
  });

  it('a truncated JPEG is a 400', async () => {
    const jpeg = await photo('grace');
    const truncated = jpeg.subarray(0, Math.floor(jpeg.length / 2));
    expectError(await postJson(`${server.url}/api/recognize`, { image: base64(truncated) }), 400, 'invalid_image');
    expectError(await uploadImage(server.url, 'ada', truncated), 400, 'invalid_image');
  });

  it('an image over MAX_IMAGE_PIXELS is a 413 before its pixels are decoded', async () => {
    const sharp = (await import('sharp')).default;
    const huge = await sharp({ create: { width: 8000, height: 6000, channels: 3, background: '#777' } })
      .png({ compressionLevel: 9 })
      .toBuffer();
    expectError(await postJson(`${server.url}/api/recognize`, { image: base64(huge) }), 413, 'image_too_large');
  });

  it('an SVG document is refused', async () => {
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>');
    expectError(await postJson(`${server.url}/api/recognize`, { image: base64(svg) }), 400, 'invalid_image');
  });
});

describe('bad bodies', () => {
  it('an empty body is a 400', async () => {
    const res = await fetch(`${server.url}/api/recognize`, { method: 'POST', headers: { 'content-type': 'application/json' } });
    expectError({ status: res.status, body: await res.json() }, 400, 'missing_field');
  });

  it('malformed JSON is a 400', async () => {
    expectError(await postJson(`${server.url}/api/recognize`, '{"image": '), 400, 'invalid_json');
  });

  it('a missing or empty image field is a 400 naming the field', async () => {
    const res = await postJson(`${server.url}/api/recognize`, { picture: 'x' });
    expectError(res, 400, 'bad_request');
    expect(res.body.error.message).toContain('image');
    expectError(await postJson(`${server.url}/api/recognize`, { image: '' }), 400, 'bad_request');
    expectError(await postJson(`${server.url}/api/recognize`, [1, 2]), 400, 'bad_request');
  });

  it('a body over the size limit is a 413', async () => {
    const big = 'A'.repeat(3 * 1024 * 1024);
    expectError(await postJson(`${server.url}/api/recognize`, { image: big }), 413, 'payload_too_large');
    const form = new FormData();
    form.set('label', 'ada');
    form.set('file', new Blob([new Uint8Array(3 * 1024 * 1024)]), 'big.jpg');
    const res = await fetch(`${server.url}/api/images`, { method: 'POST', body: form });
    expectError({ status: res.status, body: await res.json() }, 413, 'payload_too_large');
  });

  it('an upload without multipart or JSON is a 415', async () => {
    const res = await fetch(`${server.url}/api/images`, { method: 'POST', body: 'x', headers: { 'content-type': 'text/plain' } });
    expectError({ status: res.status, body: await res.json() }, 415, 'unsupported_media_type');
  });

  it('an upload without a file or without a label is a 400', async () => {
    const noFile = new FormData();
    noFile.set('label', 'ada');
    let res = await fetch(`${server.url}/api/images`, { method: 'POST', body: noFile });
    expectError({ status: res.status, body: await res.json() }, 400, 'missing_field');
    const noLabel = new FormData();
    noLabel.set('file', new Blob([await photo('grace')]), 'g.jpg');
    res = await fetch(`${server.url}/api/images`, { method: 'POST', body: noLabel });
    expectError({ status: res.status, body: await res.json() }, 400, 'missing_field');
  });
});

describe('bad labels', () => {
  it.each(['..', '../../etc', 'a/b', 'a\\b', 'tab\tname', 'nul\u0000', 'esc\u001b[31m', '', 'unknown'])(
    'upload with label %j is a 400 and stores nothing',
    async (label) => {
      const before = await hashTree(server.dataDir);
      expectError(await uploadImage(server.url, label, await photo('grace')), 400, 'invalid_label');
      expect(await hashTree(server.dataDir)).toEqual(before);
    },
  );

  it('labels with ".." or control characters in the path are a 400', async () => {
    expectError(await getJson(`${server.url}/api/images/..%2F..%2Fetc`), 400, 'invalid_label');
    expectError(await getJson(`${server.url}/api/images/a%00b`, { method: 'DELETE' }), 400, 'invalid_label');
  });

  it('DELETE of an unknown label is a 404', async () => {
    expectError(await getJson(`${server.url}/api/images/nobody`, { method: 'DELETE' }), 404, 'label_not_found');
  });
});

describe('concurrency', () => {
  it('many concurrent uploads: no image lost', async () => {
    const captures = await trainingCaptures('grace');
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) => uploadImage(server.url, i % 2 ? 'ada' : 'grace', captures[i % captures.length])),
    );
    expect(results.every((r) => r.status === 200)).toBe(true);
    const names = results.map((r) => `${r.body.label}/${r.body.filename}`);
    expect(new Set(names).size).toBe(40);
    const ada = await getJson(`${server.url}/api/images/ada`);
    const grace = await getJson(`${server.url}/api/images/grace`);
    expect(ada.body.count + grace.body.count).toBe(40);
  });

  it('a train request while another runs is a 409; the first completes', async () => {
    const [first, second] = await Promise.all([
      postJson(`${server.url}/api/train`, {}),
      new Promise((r) => setTimeout(r, 30)).then(() => postJson(`${server.url}/api/train`, {})),
    ]);
    expect(first.status).toBe(200);
    expectError(second, 409, 'training_in_progress');
  });

  it('training with no usable face is a 422 that leaves the previous model in place', async () => {
    const models = path.join(server.dataDir, 'models');
    // training.yml is written after the training answers (#27): the index waits for it.
    await getJson(`${server.url}/api/models/trained`);
    const before = await hashTree(models);
    expect(Object.keys(before).sort()).toEqual(['embeddings.json', 'model.pickle', 'training.lbph', 'training.yml', 'training.yml.source']);
    // The images go one by one: deleting a person removes their templates from the model too (and the last
    // person's, the model), while deleting an image leaves the trained model as it is.
    for (const label of ['ada', 'grace']) {
      for (const filename of (await getJson(`${server.url}/api/images/${label}`)).body.images) {
        expect((await getJson(`${server.url}/api/images/${label}/${filename}`, { method: 'DELETE' })).status).toBe(200);
      }
    }
    expect(await hashTree(models)).toEqual(before);
    expect((await uploadImage(server.url, 'walls', await readTestImage('negatives/brick.png'), 'brick.png')).status).toBe(200);
    const res = await postJson(`${server.url}/api/train`, {});
    expectError(res, 422, 'no_faces_found');
    expect(res.body.error.details.images_skipped).toHaveLength(1);
    expect(await hashTree(models)).toEqual(before);
    const after = await postJson(`${server.url}/api/recognize`, { image: base64(await photo('grace')) });
    expect(after.body.trained).toBe(true);
  });

  it('the server still answers after all of the above', async () => {
    expect((await getJson(`${server.url}/api/health`)).status).toBe(200);
  });
});
