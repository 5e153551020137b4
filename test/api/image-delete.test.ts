/**
 * DELETE /api/images/{label}/{filename} over real HTTP (issue #18 item 6): one bad photo goes, the person and their
 * other photos stay; the last one takes the label along; a missing file or label is a 404, a name that is not a
 * stored image's (a path, a dot file) a 400, and nothing outside the label's folder is ever touched.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { photo } from '../helpers/faces.js';
import { getJson, startTestServer, uploadImage, type TestServer } from '../helpers/test-server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

const del = (label: string, filename: string) => getJson(`${server.url}/api/images/${label}/${filename}`, { method: 'DELETE' });

describe('DELETE /api/images/{label}/{filename}', () => {
  it('deletes one image and keeps the others; the last one removes the label', async () => {
    const names: string[] = [];
    for (let i = 0; i < 2; i++) names.push((await uploadImage(server.url, 'Ada Lovelace', await photo('grace'))).body.filename);

    const first = await del('Ada Lovelace', names[0]);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ status: 'ok', label: 'ada-lovelace', filename: names[0], remaining: 1, retrain_needed: false });
    expect((await getJson(`${server.url}/api/images/ada-lovelace`)).body.count).toBe(1);
    expect((await fetch(`${server.url}/api/images/ada-lovelace/${names[0]}`)).status).toBe(404);
    expect((await fetch(`${server.url}/api/images/ada-lovelace/${names[1]}`)).status).toBe(200);

    // Again: that file is gone (404), the label still there.
    const again = await del('ada-lovelace', names[0]);
    expect(again.status).toBe(404);
    expect(again.body.error).toMatchObject({ code: 'not_found' });
    expect(again.body.error.message).toContain(names[0]);

    const last = await del('ada-lovelace', names[1]);
    expect(last.body).toMatchObject({ remaining: 0 });
    expect((await getJson(`${server.url}/api/labels`)).body.labels).toEqual([]);
    const gone = await del('ada-lovelace', names[1]);
    expect(gone.status).toBe(404);
    expect(gone.body.error.code).toBe('label_not_found');
  });

  it('says a retrain is needed when the trained model knows the label', async () => {
    const names: string[] = [];
    for (let i = 0; i < 2; i++) names.push((await uploadImage(server.url, 'grace', await photo('grace'))).body.filename);
    expect((await fetch(`${server.url}/api/train`, { method: 'POST' })).status).toBe(200);
    const { status, body } = await del('grace', names[0]);
    expect(status).toBe(200);
    expect(body).toMatchObject({ remaining: 1, retrain_needed: true });
  });

  it('refuses a name that is not a stored image’s with 400, and never leaves the label’s folder', async () => {
    const { filename } = (await uploadImage(server.url, 'bob', await photo('grace'))).body;
    const outside = path.join(server.dataDir, 'keep.jpg');
    await fs.writeFile(outside, 'not an image of bob');
    await fs.writeFile(path.join(server.dataDir, 'images', 'bob', '.hidden.jpg'), 'hidden');
    // (A plain `..` segment never gets here: the URL resolves it before it is sent.)
    for (const name of [
      '..%2F..%2Fkeep.jpg',
      '..%2Fgrace%2Fx.jpg',
      '.hidden.jpg',
      '%2E%2E%2Fx',
      'a%5Cb.jpg',
      'x%00.jpg',
      'a'.repeat(201),
    ]) {
      const { status, body } = await del('bob', name);
      expect(status, name).toBe(400);
      expect(body.error.code, name).toBe('bad_request');
      expect(body.error.message, name).toMatch(/filename/);
    }
    const bad = await del('bob..x', filename);
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_label');
    expect(await fs.readFile(outside, 'utf8')).toBe('not an image of bob');
    expect((await fs.readdir(path.join(server.dataDir, 'images', 'bob'))).sort()).toEqual(['.hidden.jpg', filename]);
  });
});
