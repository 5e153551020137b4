/**
 * Requests no fetch client would send, over a raw TCP socket to the service on 127.0.0.1: request lines with
 * odd methods, raw `..` and encoded paths, absolute-form targets, missing or duplicated headers, obsolete line
 * folding, bodies shorter or longer than their Content-Length, broken chunked encoding, GET with a body, and
 * pipelined requests. Node's parser answers some itself (400, 431); the rest reach the app. Either way: no 5xx,
 * and the server keeps answering.
 */
import net from 'node:net';
import fc from 'fast-check';

export interface RawCase {
  note: string;
  bytes: Buffer;
  /** The body is cut short of its Content-Length: the client gives up (an abort), no answer is expected. */
  abort: boolean;
}

const TARGETS = [
  '/api/health',
  '/api/labels',
  '/api/recognize',
  '/api/images',
  '/api/images/../../etc/passwd',
  '/api/images/%2e%2e/%2e%2e/sibling',
  '/api/images/alice/..%2f..%2f..%2fsibling%2fcanary.txt',
  '/models/../../package.json',
  '/models/%2e%2e/%2e%2e/package.json',
  '/api/docs/../../package.json',
  '/api/results?limit=1&limit=2',
  '/api/train',
  '//api//health',
  'http://127.0.0.1/api/health',
  '*',
  '/api/health?\u00ff',
  '/api/images/\u00e9',
  `/api/${'a'.repeat(9000)}`,
];

const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'HEAD', 'OPTIONS', 'PATCH', 'TRACE', 'CONNECT', 'FOO', 'get'];

type Flaw = 'none' | 'no-host' | 'two-hosts' | 'obs-fold' | 'bad-header-name' | 'huge-header' | 'http10' | 'bad-version' | 'lf-only';
type BodyKind = 'none' | 'json' | 'short' | 'long' | 'chunked' | 'bad-chunked' | 'both-lengths' | 'two-lengths' | 'pipelined';

const FLAWS: Flaw[] = [
  'none',
  'none',
  'none',
  'no-host',
  'two-hosts',
  'obs-fold',
  'bad-header-name',
  'huge-header',
  'http10',
  'bad-version',
  'lf-only',
];
const BODIES: BodyKind[] = ['none', 'json', 'json', 'short', 'long', 'chunked', 'bad-chunked', 'both-lengths', 'two-lengths', 'pipelined'];

export function rawCase(port: number): fc.Arbitrary<RawCase> {
  return fc
    .record({
      method: fc.constantFrom(...METHODS),
      target: fc.constantFrom(...TARGETS),
      flaw: fc.constantFrom(...FLAWS),
      body: fc.constantFrom(...BODIES),
      json: fc.oneof(fc.constant('{"image":"x"}'), fc.constant('{"label":"..","image":"AAAA"}'), fc.json({ maxDepth: 2 })),
      host: fc.constantFrom(`127.0.0.1:${port}`, `localhost:${port}`, '127.0.0.1'),
    })
    .map(({ method, target, flaw, body, json, host }) => {
      const eol = flaw === 'lf-only' ? '\n' : '\r\n';
      const version = flaw === 'http10' ? 'HTTP/1.0' : flaw === 'bad-version' ? 'HTTP/9.9' : 'HTTP/1.1';
      const lines = [`${method} ${target} ${version}`];
      if (flaw !== 'no-host') lines.push(`Host: ${host}`);
      if (flaw === 'two-hosts') lines.push('Host: evil.example');
      if (flaw === 'obs-fold') lines.push('X-Folded: first', ' second');
      if (flaw === 'bad-header-name') lines.push('Bad Header: x');
      if (flaw === 'huge-header') lines.push(`X-Huge: ${'h'.repeat(20_000)}`);
      lines.push('Content-Type: application/json', 'Connection: close');
      const payload = Buffer.from(json);
      let tail = Buffer.alloc(0);
      let abort = false;
      switch (body) {
        case 'none':
          break;
        case 'json':
          lines.push(`Content-Length: ${payload.length}`);
          tail = payload;
          break;
        case 'short':
          // Declares more than it sends, then gives up.
          lines.push(`Content-Length: ${payload.length + 100}`);
          tail = payload;
          abort = true;
          break;
        case 'long':
          lines.push(`Content-Length: ${Math.max(0, payload.length - 3)}`);
          tail = payload;
          break;
        case 'chunked':
          lines.push('Transfer-Encoding: chunked');
          tail = Buffer.concat([Buffer.from(`${payload.length.toString(16)}\r\n`), payload, Buffer.from('\r\n0\r\n\r\n')]);
          break;
        case 'bad-chunked':
          lines.push('Transfer-Encoding: chunked');
          tail = Buffer.from('zz\r\nxx\r\n0\r\n\r\n');
          break;
        case 'both-lengths':
          lines.push('Transfer-Encoding: chunked', `Content-Length: ${payload.length}`);
          tail = Buffer.concat([Buffer.from(`${payload.length.toString(16)}\r\n`), payload, Buffer.from('\r\n0\r\n\r\n')]);
          break;
        case 'two-lengths':
          lines.push(`Content-Length: ${payload.length}`, `Content-Length: ${payload.length + 1}`);
          tail = payload;
          break;
        case 'pipelined':
          lines.push(`Content-Length: ${payload.length}`);
          tail = Buffer.concat([payload, Buffer.from(`GET /api/health HTTP/1.1\r\nHost: ${host}\r\n\r\n`)]);
          break;
      }
      const head = Buffer.from(`${lines.join(eol)}${eol}${eol}`, 'latin1');
      const bytes = Buffer.concat([head, tail]);
      const note = `${method} ${target.slice(0, 60)} ${version} flaw=${flaw} body=${body}`;
      // fast-check prints a counterexample with this: the request as text, not a byte array.
      const text = () => `${note}: ${JSON.stringify(bytes.toString('latin1').slice(0, 600))}`;
      return { note, bytes, abort, [fc.toStringMethod]: text };
    });
}

/**
 * Sends one raw request and returns the first status line's code (null: no answer, as for an aborted body or a
 * connection the server closed without one). Waits for the whole answer (Connection: close) up to `ms`.
 */
export function sendRaw(port: number, c: RawCase, ms = 10_000): Promise<{ status: number | null; text: string; timedOut: boolean }> {
  return new Promise((done) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let finished = false;
    const finish = (timedOut: boolean) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(chunks).toString('latin1');
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      done({ status: m ? Number(m[1]) : null, text, timedOut });
    };
    const timer = setTimeout(() => finish(!c.abort), c.abort ? 150 : ms);
    socket.on('data', (d) => chunks.push(d));
    socket.on('error', () => finish(false));
    socket.on('close', () => finish(false));
    socket.write(c.bytes);
  });
}
