/** ProcessorStatus on its own, against a plain node:http server on 127.0.0.1: the answers the relay test does not cover. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ProcessorStatus } from './processor-status.js';

let server: http.Server | null = null;

async function listen(handler: http.RequestListener): Promise<string> {
  server = http.createServer(handler);
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = null;
});

describe('ProcessorStatus', () => {
  it('not configured: answers at once and checks nothing', async () => {
    const s = new ProcessorStatus({ url: '', intervalMs: 1000 });
    await s.start();
    expect(s.status()).toEqual({ configured: false, reachable: false, checked_at: null, error: null, processor: null });
  });

  it('a processor that does not answer within the timeout is unreachable', async () => {
    const url = await listen(() => {
      // never answers
    });
    const s = new ProcessorStatus({ url, intervalMs: 60_000, timeoutMs: 200 });
    await s.check();
    expect(s.status()).toMatchObject({ configured: true, reachable: false, error: 'no answer within 200 ms', processor: null });
  });

  it('an answer other than 200 or 503 is unexpected; a URL ending in /ready is read as the base', async () => {
    const paths: string[] = [];
    const url = await listen((req, res) => {
      paths.push(req.url ?? '');
      res.writeHead(404).end('no');
    });
    const s = new ProcessorStatus({ url: `${url}/ready/`, intervalMs: 60_000 });
    await s.check();
    expect(paths).toEqual(['/ready']);
    expect(s.status()).toMatchObject({ reachable: false, error: 'unexpected answer (HTTP 404)' });
  });

  it('a broken JSON body is "unexpected answer"', async () => {
    const url = await listen((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":'));
    const s = new ProcessorStatus({ url, intervalMs: 60_000 });
    await s.check();
    expect(s.status()).toMatchObject({ reachable: false, error: 'unexpected answer' });
  });

  it('an invalid URL is refused without echoing it', () => {
    expect(() => new ProcessorStatus({ url: 'http://user:secret@[bad', intervalMs: 1000 })).toThrow(/^PROCESSOR_URL is not a valid URL$/);
  });
});
