/**
 * The verification rate limit (#35 item 1) is shared by API replicas: two API services on one PostgreSQL database
 * (DATABASE_URL) count the same caller and the same label together, so spreading attempts over replicas gains
 * nothing. AUTH_MODE=off: the caller is the client's address (127.0.0.1 for both here).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { base64, photo } from '../helpers/faces.js';
import { freshPostgresDatabase } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

const ENV = { WORKERS: '1', EMBEDDING_ENABLED: 'false', OBJECT_DETECTION_ENABLED: 'false', CHAT_ENABLED: 'false' };
const LIMITS = { VERIFY_RATE_WINDOW_S: '60', VERIFY_RATE_PER_VERIFIER: '4', VERIFY_RATE_PER_LABEL: '3' };

describe('two API services on one PostgreSQL', () => {
  let a: TestServer;
  let b: TestServer;

  beforeAll(async () => {
    const url = await freshPostgresDatabase();
    a = await startTestServer({ ...ENV, ...LIMITS, DATABASE_URL: url });
    b = await startTestServer({ ...ENV, ...LIMITS, DATABASE_URL: url });
  }, 60_000);
  afterAll(async () => {
    await a?.close();
    await b?.close();
  });

  async function verify(server: TestServer, label: string, image: string) {
    const res = await fetch(`${server.url}/api/verify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ label, image }),
    });
    return { status: res.status, body: (await res.json()) as any, retryAfter: res.headers.get('retry-after') };
  }

  it('count one label and one caller together', async () => {
    const image = base64(await photo('grace'));
    // The label's 3 attempts spread over both: the 4th is refused by either.
    for (const server of [a, b, a]) expect((await verify(server, 'grace', image)).status).toBe(200);
    const byLabel = await verify(b, 'grace', image);
    expect(byLabel.status).toBe(429);
    expect(byLabel.body.error.code).toBe('rate_limited');
    expect(byLabel.body.error.message).toMatch(/VERIFY_RATE_PER_LABEL/);
    expect(Number(byLabel.retryAfter)).toBeGreaterThanOrEqual(1);
    // The caller has made 4 attempts on both together: a 5th, of another label, is refused on A for the caller.
    const byCaller = await verify(a, 'eileen', image);
    expect(byCaller.status).toBe(429);
    expect(byCaller.body.error.message).toMatch(/VERIFY_RATE_PER_VERIFIER/);
  }, 60_000);
});
