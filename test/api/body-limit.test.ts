/**
 * Bodies over the limit and clients that go away (issue #16 item 5), with real sockets and real clients: a 413 is
 * read by clients that send the whole body before reading (Python's urllib and requests), by curl-style clients
 * that wait for `100 Continue`, and on a chunked body; a client that hangs up mid-body is one info line, "client
 * aborted", never an ERROR with a stack. The server is started as `npm start` starts it (answerExpectContinue).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import type { Server } from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { serve } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createService, type Service } from '../../server/app.js';
import { loadSettings } from '../../server/config/settings.js';
import { answerExpectContinue } from '../../server/http/request.js';
import { createLogger } from '../../server/logger.js';
import { checkedFetch } from '../helpers/contract.js';
import { REPO_ROOT } from '../helpers/test-server.js';

const LIMIT = 256 * 1024;
let service: Service;
let http: Server;
let port: number;
let dataDir: string;
let checked: { problems: string[]; settled: () => Promise<void> };
const logLines: string[] = [];

beforeAll(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-body-'));
  const settings = loadSettings(
    {
      DATA_DIR: dataDir,
      WORKERS: '1',
      MAX_BODY_BYTES: String(LIMIT),
      EMBEDDING_ENABLED: 'false',
      OBJECT_DETECTION_ENABLED: 'false',
      REMOTE_DETECTOR_ENABLED: 'false',
    },
    REPO_ROOT,
  );
  service = await createService(
    settings,
    createLogger('info', (line) => logLines.push(line)),
  );
  const wrapped = checkedFetch(service.app.fetch);
  checked = wrapped;
  http = await new Promise<Server>((resolve) => {
    const s = serve({ fetch: wrapped.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s as Server));
  });
  answerExpectContinue(http, settings.maxBodyBytes);
  port = (http.address() as net.AddressInfo).port;
});

afterAll(async () => {
  await checked.settled();
  await new Promise<void>((resolve) => {
    http.close(() => resolve());
    http.closeAllConnections();
  });
  await service.close();
  await fs.rm(dataDir, { recursive: true, force: true });
  expect(checked.problems).toEqual([]);
});

/** A raw HTTP/1.1 client: writes the head, then what `body` writes; collects everything the server sends. */
function rawRequest(head: string, body?: (socket: net.Socket) => void) {
  const socket = net.connect(port, '127.0.0.1');
  let received = '';
  socket.on('data', (d) => (received += d.toString('latin1')));
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  socket.on('error', () => {});
  socket.write(head);
  body?.(socket);
  return {
    socket,
    received: () => received,
    closed,
    /** Resolves when the received text matches (or rejects after `ms`). */
    async until(pattern: RegExp, ms = 10_000): Promise<string> {
      const deadline = Date.now() + ms;
      while (!pattern.test(received)) {
        if (Date.now() > deadline) throw new Error(`no ${pattern} within ${ms} ms; got ${JSON.stringify(received.slice(0, 300))}`);
        await new Promise((r) => setTimeout(r, 10));
      }
      return received;
    },
  };
}

/** A whole answer with a JSON body (sent with Content-Length or chunked). */
const ANSWER = /\r\n\r\n(?:[0-9a-f]+\r\n)?\{.*\}/s;

const head = (p: string, extra: string) =>
  `POST ${p} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\n${extra}\r\n`;

describe('a body over MAX_BODY_BYTES', () => {
  it('is read (up to 2 x the limit) and answered 413, on a connection that stays usable', async () => {
    const size = Math.floor(LIMIT * 1.5);
    const client = rawRequest(head('/api/recognize', `Content-Length: ${size}\r\n`), (s) => s.write(Buffer.alloc(size, 0x41)));
    const text = await client.until(ANSWER);
    expect(text).toMatch(/^HTTP\/1\.1 413 /);
    expect(text).toMatch(/"code":"payload_too_large"/);
    expect(text).not.toMatch(/connection: close/i);
    // The body was read whole: the next request on the same connection is answered.
    client.socket.write(`GET /api/health HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
    await client.until(/HTTP\/1\.1 200 /);
    client.socket.destroy();
  });

  it('longer than that is answered at once, and the connection closed', async () => {
    const client = rawRequest(head('/api/recognize', `Content-Length: ${LIMIT * 3}\r\n`));
    const text = await client.until(ANSWER);
    expect(text).toMatch(/^HTTP\/1\.1 413 /);
    expect(text).toMatch(/connection: close/i);
    await client.closed;
  });

  it('with Expect: 100-continue gets the 413 instead of 100, before sending a byte of it', async () => {
    const client = rawRequest(head('/api/recognize', `Content-Length: ${LIMIT + 1}\r\nExpect: 100-continue\r\n`));
    const text = await client.until(ANSWER);
    expect(text).toMatch(/^HTTP\/1\.1 413 /);
    expect(text).not.toMatch(/100 Continue/);
    await client.closed;
    // Within the limit, 100 Continue comes, and the request goes on as usual.
    const ok = rawRequest(head('/api/results', 'Content-Length: 14\r\nExpect: 100-continue\r\n'));
    await ok.until(/^HTTP\/1\.1 100 Continue\r\n\r\n/);
    ok.socket.write('{"results":[]');
    ok.socket.write('}');
    ok.socket.end();
    expect(await ok.until(/HTTP\/1\.1 400 .*"code":"bad_request"/s)).toMatch(/"code":"bad_request"/);
  });

  it('sent chunked (no Content-Length) is answered 413 too', async () => {
    const chunk = Buffer.alloc(64 * 1024, 0x41);
    const res = await fetch(`http://127.0.0.1:${port}/api/recognize`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: new ReadableStream({
        start(controller) {
          for (let i = 0; i < 6; i++) controller.enqueue(chunk);
          controller.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('payload_too_large');
  });

  it("is read as a 413 by Python's urllib and requests, which send the whole body before reading", async () => {
    const script = `
import json, sys, urllib.request, urllib.error
url, size = sys.argv[1], int(sys.argv[2])
body = b'{"image":"' + b'A' * size + b'"}'
try:
    urllib.request.urlopen(urllib.request.Request(url, data=body, headers={'Content-Type': 'application/json'}), timeout=30)
    print('urllib', 'no error')
except urllib.error.HTTPError as e:
    print('urllib', e.code, json.loads(e.read())['error']['code'])
try:
    import requests
except ImportError:
    print('requests', 'not installed')
else:
    r = requests.post(url, data=body, headers={'Content-Type': 'application/json'}, timeout=30)
    print('requests', r.status_code, r.json()['error']['code'])
`;
    const { stdout } = await promisify(execFile)('python3', [
      '-c',
      script,
      `http://127.0.0.1:${port}/api/recognize`,
      String(LIMIT + LIMIT / 2),
    ]);
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toBe('urllib 413 payload_too_large');
    expect(lines[1]).toMatch(/^requests (413 payload_too_large|not installed)$/);
  });
});

describe('a client that hangs up in the middle of its body', () => {
  it.each([
    ['JSON', '/api/recognize', 'application/json', '{"image":"AAAA'],
    [
      'multipart',
      '/api/images',
      'multipart/form-data; boundary=xyz',
      '--xyz\r\nContent-Disposition: form-data; name="label"\r\n\r\nada\r\n--xyz\r\n',
    ],
    ['results', '/api/results', 'application/json', '{"results":[{"id":"'],
  ])('(%s) is logged as one "client aborted" line at info level, not as an error', async (_kind, route, type, part) => {
    const before = logLines.length;
    const client = rawRequest(
      `POST ${route} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: ${type}\r\nContent-Length: 100000\r\n\r\n${part}`,
    );
    await new Promise((r) => setTimeout(r, 200));
    client.socket.destroy();
    // The request line comes once the handler has ended, which may wait for the embedded database's first open
    // (its worker thread starts in seconds on a loaded machine): a generous deadline, not a latency check.
    const deadline = Date.now() + 30_000;
    while (!logLines.slice(before).some((l) => l.includes('request method=POST'))) {
      if (Date.now() > deadline) throw new Error(`no request line logged: ${logLines.slice(before).join('')}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const lines = logLines.slice(before);
    expect(lines.filter((l) => / ERROR /.test(l))).toEqual([]);
    const aborted = lines.filter((l) => l.includes('client aborted'));
    expect(aborted).toHaveLength(1);
    expect(aborted[0]).toMatch(new RegExp(` INFO  client aborted POST ${route} before its body was complete request_id=`));
    expect(aborted[0].split('\n').filter(Boolean)).toHaveLength(1);
  });
});
