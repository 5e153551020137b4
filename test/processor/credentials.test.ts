/**
 * #28 finding 7d: a wrong PROCESSOR_OIDC_CLIENT_SECRET is a credentials failure, not "backend unreachable" beside a
 * /ready that says ready. The processor (in this process, the in-process queue) asks Lookout's own IdP (real, on
 * 127.0.0.1) for its client-credentials token: refused, /ready is 503 not_ready with a reason naming the setting,
 * the secret nowhere in it; with the right secret in the file it is ready again (and what fails next is the
 * backend, said as such).
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVICE_SECRET, startTestIdp, type TestIdp } from '../helpers/idp.js';
import { type InProcessProcessor, startProcessor, tempDir, waitFor } from '../helpers/processor-harness.js';

const WRONG = 'not-the-service-secret-4242';
let idp: TestIdp;
let processor: InProcessProcessor | undefined;
let data: string;

beforeAll(async () => {
  idp = await startTestIdp();
  data = await tempDir();
}, 60_000);

afterAll(async () => {
  await processor?.close();
  await idp?.close();
  await fs.rm(data, { recursive: true, force: true });
});

describe('processor with client credentials the token endpoint refuses', () => {
  it('is not ready and says the credentials were refused, never the secret; ready again once the secret is right', async () => {
    const secretFile = path.join(data, 'client-secret');
    await fs.writeFile(secretFile, `${WRONG}\n`);
    processor = await startProcessor({
      DATA_DIR: data,
      PROCESSOR_BACKEND_URL: 'http://127.0.0.1:9',
      PROCESSOR_OIDC_TOKEN_URL: `${idp.issuer}/protocol/openid-connect/token`,
      PROCESSOR_OIDC_CLIENT_ID: 'lookout-service',
      PROCESSOR_OIDC_CLIENT_SECRET_FILE: secretFile,
    });
    const url = processor.url;
    const read = async () => {
      const res = await fetch(`${url}/ready`);
      return { status: res.status, text: await res.text() };
    };
    const refused = await waitFor('a refused poll', async () => {
      const r = await read();
      return JSON.parse(r.text).polls.labels.ok === false && r;
    });
    const body = JSON.parse(refused.text);
    expect(refused.status).toBe(503);
    expect(body.status).toBe('not_ready');
    expect(body.reason).toMatch(/refused the processor's client credentials.*PROCESSOR_OIDC_CLIENT_SECRET/);
    expect(body.polls.labels.error).toMatch(/refused the processor's client credentials \(invalid_client\)/);
    expect(body.polls.labels.error).not.toMatch(/unreachable/);
    expect(refused.text).not.toContain(WRONG);
    expect(refused.text).not.toContain(SERVICE_SECRET);

    // The Secret rotated to the right one (the file is read at each fetch): ready, and the backend is what fails.
    await fs.writeFile(secretFile, `${SERVICE_SECRET}\n`);
    const ready = await waitFor('ready again', async () => {
      const r = await read();
      return r.status === 200 && JSON.parse(r.text);
    });
    expect(ready.status).toBe('ready');
    expect(ready.reason).toBeUndefined();
    await waitFor('the backend named as unreachable', async () =>
      /backend unreachable/.test((await processor!.ready()).polls.labels.error ?? ''),
    );
  }, 60_000);
});
