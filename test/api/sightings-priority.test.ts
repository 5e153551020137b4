/**
 * #36 4: sightings cost recognition nothing, over real HTTP: POST /api/recognize answers while its sighting's row
 * is still being written; a sighting's work (JPEG, descriptor, row) waits while another recognition runs; the
 * queue is in GET /metrics and GET /api/sightings/status; and the sightings are all stored in the end.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewSighting } from '../../server/sightings/sighting-store.js';
import { base64, photo } from '../helpers/faces.js';
import { getJson, postJson, startTestServer, type TestServer } from '../helpers/test-server.js';

describe('sightings off the request path', () => {
  let server: TestServer;
  let grace: Buffer;
  beforeAll(async () => {
    server = await startTestServer();
    grace = await photo('grace');
  });
  afterAll(async () => {
    await server?.close();
  });

  /** The store's writes, each held until `release()` when `hold` is set. */
  function watchWrites(hold: boolean) {
    const store = server.service.ctx.sightings;
    const add = store.add.bind(store);
    const started: NewSighting[] = [];
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    store.add = async (row: Parameters<typeof add>[0]) => {
      started.push(row);
      if (hold) await gate;
      return add(row);
    };
    return {
      started,
      release,
      restore: () => {
        delete (store as Partial<typeof store>).add;
      },
    };
  }

  it("answers while the sighting's row is still being written, and stores it once the write goes through", async () => {
    const writes = watchWrites(true);
    try {
      const before = await server.service.ctx.sightings.count();
      const res = await postJson(`${server.url}/api/recognize`, { image: base64(grace) });
      expect(res.status).toBe(200);
      expect(res.body.faces).toHaveLength(1);
      // Its row is written after the answer; once that write is under way (and blocked), recognitions still answer.
      while (writes.started.length === 0) await new Promise((r) => setTimeout(r, 20));
      const next = await postJson(`${server.url}/api/recognize`, { image: base64(grace) });
      expect(next.status).toBe(200);
      expect(next.body.faces).toHaveLength(1);
      expect(writes.started).toHaveLength(1);
      expect(await server.service.ctx.sightings.count()).toBe(before);
      writes.release();
      await server.service.ctx.sightingRecorder.idle();
      expect(writes.started).toHaveLength(2);
      expect(await server.service.ctx.sightings.count()).toBe(before + 2);
    } finally {
      writes.release();
      writes.restore();
    }
  });

  it("does a sighting's work only once no recognition runs", async () => {
    const faces = server.service.ctx.faces;
    const recognize = faces.recognize.bind(faces);
    let reached: () => void = () => undefined;
    const heldReached = new Promise<void>((r) => (reached = r));
    let release: () => void = () => undefined;
    const held = new Promise<void>((r) => (release = r));
    let calls = 0;
    // The first recognition is held in flight after its work, as a slow one would be.
    faces.recognize = async (...args: Parameters<typeof recognize>) => {
      const first = ++calls === 1;
      const answer = await recognize(...args);
      if (first) {
        reached();
        await held;
      }
      return answer;
    };
    const writes = watchWrites(false);
    try {
      const slow = postJson(`${server.url}/api/recognize`, { image: base64(grace), source: 'page' });
      await heldReached;
      const quick = await postJson(`${server.url}/api/recognize`, { image: base64(grace) });
      expect(quick.status).toBe(200);
      // Both sightings wait while the first recognition is still running.
      await new Promise((r) => setTimeout(r, 300));
      expect(writes.started).toHaveLength(0);
      expect(server.service.ctx.sightingRecorder.stats().queued).toBe(2);
      release();
      expect((await slow).status).toBe(200);
      await server.service.ctx.sightingRecorder.idle();
      expect(writes.started.map((s) => s.source).sort()).toEqual(['api', 'page']);
    } finally {
      release();
      writes.restore();
      delete (faces as Partial<typeof faces>).recognize;
    }
  });

  it('shows the queue in GET /metrics: waiting, dropped and stored', async () => {
    await server.service.ctx.sightingRecorder.idle();
    const text = await (await fetch(`${server.url}/metrics`)).text();
    expect(text).toMatch(/^lookout_sightings_queue_depth 0$/m);
    expect(text).toMatch(/^lookout_sightings_dropped_total 0$/m);
    const stored = Number(/^lookout_sightings_stored_total (\d+)$/m.exec(text)?.[1]);
    expect(stored).toBe(4);
  });
});

describe('GET /api/sightings/status', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ SIGHTINGS_SOURCES: 'api' });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('says whether sightings are kept and counts the queue: waiting, dropped, stored, failed', async () => {
    const before = await getJson(`${server.url}/api/sightings/status`);
    expect(before.status).toBe(200);
    expect(before.body).toEqual({ enabled: true, queued: 0, dropped: 0, stored: 0, failed: 0 });
    const res = await postJson(`${server.url}/api/recognize`, { image: base64(await photo('grace')) });
    expect(res.status).toBe(200);
    await server.service.ctx.sightingRecorder.idle();
    expect((await getJson(`${server.url}/api/sightings/status`)).body).toEqual({
      enabled: true,
      queued: 0,
      dropped: 0,
      stored: 1,
      failed: 0,
    });
  });
});
