/**
 * Every `unknown` face of POST /api/recognize says why (`reason`, issue #18 item 1), over real HTTP: before training
 * `not_trained`; after it, the very bytes of a training photo `copy_of_training_image` (LBPH distance below the
 * window's start), another person `no_match`, and a known face no reason at all.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { base64, photo, rescaled, trainingCaptures } from '../helpers/faces.js';
import { postJson, startTestServer, uploadImage, type TestServer } from '../helpers/test-server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

const recognize = async (bytes: Uint8Array) => {
  const { status, body } = await postJson(`${server.url}/api/recognize`, { image: base64(bytes) });
  expect(status).toBe(200);
  return body;
};

describe('the reason of an unknown face', () => {
  it('is not_trained while the recognizer has no model', async () => {
    const body = await recognize(await photo('grace'));
    expect(body.trained).toBe(false);
    expect(body.faces).toEqual([expect.objectContaining({ label: 'unknown', confidence: 0, reason: 'not_trained' })]);
  });

  it('after training: a training photo itself is a copy, another person no match, the person known without a reason', async () => {
    const captures = await trainingCaptures('grace');
    for (const capture of captures) expect((await uploadImage(server.url, 'grace', capture)).status).toBe(200);
    expect((await postJson(`${server.url}/api/train`, {})).status).toBe(200);

    const copy = (await recognize(captures[0])).faces;
    expect(copy).toHaveLength(1);
    expect(copy[0]).toMatchObject({ label: 'unknown', confidence: 0, reason: 'copy_of_training_image' });
    expect(copy[0].distance).toBeLessThan(4);

    const other = (await recognize(await photo('eileen'))).faces;
    expect(other).toEqual([expect.objectContaining({ label: 'unknown', confidence: 0, reason: 'no_match' })]);
    expect(other[0].distance).toBeGreaterThan(85);

    const known = (await recognize(await rescaled('grace', 0.8))).faces;
    expect(known[0].label).toBe('grace');
    expect(known[0]).not.toHaveProperty('reason');
  });
});
