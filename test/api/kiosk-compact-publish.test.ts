/**
 * #27 leftover: the kiosk's compact segments are made when a model is published (a training, a deletion), in the
 * background, not at the first manifest request: by the time a kiosk asks, the set for that version is made, and the
 * request answers from it (the very promise the publish started), so the first kiosk request after a training does
 * not pay for building every person's segment.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { KioskCompact } from '../../server/audit/kiosk-compact.js';
import type { CompactModelManifest } from '../../shared/api/compact-models.js';
import { trainingCaptures } from '../helpers/faces.js';
import { getJson, postJson, startTestServer, type TestServer, uploadImage } from '../helpers/test-server.js';

const LIGHT = { WORKERS: '1', EMBEDDING_ENABLED: 'false', OBJECT_DETECTION_ENABLED: 'false', CHAT_ENABLED: 'false' };

/** Every KioskCompact.view call of this process: the snapshot version asked for, and the set promise it returned. */
const view = vi.spyOn(KioskCompact.prototype, 'view');
const calls = () => view.mock.calls.map((args, i) => ({ version: args[0].version, set: view.mock.results[i]?.value as Promise<unknown> }));

/**
 * The set promise of the first view call for `version`, waited for (up to 60 s under load) without any request of
 * the test's; in an object, so that the async function does not resolve it.
 */
async function preparedFor(version: string): Promise<{ set: Promise<unknown> }> {
  const until = Date.now() + 60_000;
  for (;;) {
    const found = calls().find((c) => c.version === version);
    if (found) return { set: found.set };
    if (Date.now() > until) throw new Error(`no compact set was made for ${version} without a request`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('compact kiosk segments made at publish', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(LIGHT);
    for (const person of ['grace', 'lionel'] as const) {
      for (const capture of await trainingCaptures(person)) expect((await uploadImage(server.url, person, capture)).status).toBe(200);
    }
  }, 180_000);
  afterAll(async () => {
    await server?.close();
    view.mockRestore();
  });
  afterEach(() => {
    view.mockClear();
  });

  it('after a training, before any kiosk asks; the first manifest request answers from that set', async () => {
    expect((await postJson(`${server.url}/api/train`, {})).status).toBe(200);
    const version = server.service.ctx.faces.trainedFiles.version!;
    // Made in the background once the training published (and its training.yml is written): nobody asked yet.
    const { set: prepared } = await preparedFor(version);
    await prepared;
    const made = calls().length;

    const res = await fetch(`${server.url}/api/models/trained/compact`);
    expect(res.status).toBe(200);
    const manifest = (await res.json()) as CompactModelManifest;
    expect(manifest.lbph?.people.map((p) => p.label)).toEqual(['grace', 'lionel']);
    // The request's view of the version is the set the publish made, not a new one.
    const asked = calls().slice(made);
    expect(asked.length).toBeGreaterThan(0);
    for (const c of asked) expect(c.set).toBe(prepared);
  }, 240_000);

  it('after a deletion too: the set without the person is made before a kiosk asks', async () => {
    expect((await getJson(`${server.url}/api/images/lionel`, { method: 'DELETE' })).status).toBe(200);
    const version = (await server.service.ctx.faces.writtenFiles()).version!;
    const { set: prepared } = await preparedFor(version);
    const made = calls().length;
    const res = await fetch(`${server.url}/api/models/trained/compact`);
    expect(res.status).toBe(200);
    const manifest = (await res.json()) as CompactModelManifest;
    expect(manifest.labels).toEqual(['grace']);
    expect(manifest.lbph?.people.map((p) => p.label)).toEqual(['grace']);
    for (const c of calls().slice(made)) expect(c.set).toBe(prepared);
  }, 240_000);
});
