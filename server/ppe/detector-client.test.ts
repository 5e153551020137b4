import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { Logger } from '../logger.js';
import { PpeDetectorClient } from './detector-client.js';

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} };

let server: http.Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** A real detector /health on 127.0.0.1 that resets the connection of the first `resets` requests. */
async function healthServer(resets: number): Promise<{ url: string; requests: () => number }> {
  let requests = 0;
  server = http.createServer((req, res) => {
    requests++;
    if (requests <= resets) {
      req.socket.destroy();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ready":true}');
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests: () => requests };
}

const client = (endpoint: string) => new PpeDetectorClient({ endpoint, timeoutMs: 2000, checkIntervalMs: 60_000, log: quiet });

describe('PpeDetectorClient health check', () => {
  it('one reset connection (a stale keep-alive socket) does not mark the detector unreachable: it asks again', async () => {
    const detector = await healthServer(1);
    const c = client(detector.url);
    await c.check();
    expect(c.lastHealth).toMatchObject({ reachable: true, error: null });
    expect(detector.requests()).toBe(2);
  });

  it('a detector that resets every connection is unreachable, and says why', async () => {
    const detector = await healthServer(Number.POSITIVE_INFINITY);
    const c = client(detector.url);
    await c.check();
    expect(c.lastHealth.reachable).toBe(false);
    expect(c.lastHealth.error).toMatch(/^is unreachable \((ECONNRESET|UND_ERR_SOCKET|EPIPE)\)$/);
    expect(detector.requests()).toBe(2);
  });

  it('a refused connection is the answer: no second attempt', async () => {
    const detector = await healthServer(0);
    const url = detector.url;
    server?.close();
    await new Promise((r) => setTimeout(r, 50));
    const c = client(url);
    await c.check();
    expect(c.lastHealth).toMatchObject({ reachable: false, error: 'is unreachable (ECONNREFUSED)' });
  });
});
