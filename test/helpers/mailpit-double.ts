/**
 * TEST DOUBLE of Mailpit's HTTP API (https://mailpit.axllent.org/docs/api-v1/). Mailpit itself cannot run here,
 * so tests talk to this instead: a real HTTP server on 127.0.0.1 speaking Mailpit's wire format for the calls the
 * processor makes. `POST /api/v1/send` takes Mailpit's JSON (`From {Email, Name}`, `To [{Email, Name}]`, `Subject`,
 * `Text`, `HTML`, `Headers`, `Tags`) and answers 200 `{"ID":"<random id>"}`, or 400 `{"Error":"..."}` for a body
 * that is not JSON or lacks a sender or recipients, as Mailpit does. `GET /api/v1/messages` lists what arrived
 * (`{ total, messages }`, newest first, summaries in Mailpit's shape). It does not build MIME messages or run SMTP.
 * It can be made to misbehave: fail the next N sends with a status, be down (503), or answer slowly.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A send request as Mailpit's API takes it (the body the double received, parsed). */
export interface MailpitSendBody {
  From: { Email: string; Name?: string };
  To: { Email: string; Name?: string }[];
  Subject?: string;
  Text?: string;
  HTML?: string;
  Headers?: Record<string, string>;
  Tags?: string[];
  [key: string]: unknown;
}

export interface MailpitDouble {
  /** Base URL (`http://127.0.0.1:<port>`), as MAIL_URL takes it. */
  readonly url: string;
  /** Accepted send bodies, in order. */
  readonly messages: MailpitSendBody[];
  /** The IDs the double gave them, in the same order. */
  readonly ids: string[];
  /** Authorization header of every send request (accepted or not), in order. */
  readonly authorizations: (string | undefined)[];
  /** The next `n` send requests get `status` (with a Mailpit-style error body) and are not stored. */
  failNext(n: number, status: number): void;
  /** While down, every request gets 503. */
  setDown(down: boolean): void;
  /** Delay every answer by `ms` (put it past the client's timeout to test that). */
  setDelay(ms: number): void;
  close(): Promise<void>;
}

const MAX_BODY = 10 * 1024 * 1024;

function invalid(body: unknown): string | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'json: cannot unmarshal into Go value';
  const b = body as Partial<MailpitSendBody>;
  if (typeof b.From?.Email !== 'string' || !b.From.Email.includes('@')) return 'error building message: from not set';
  if (!Array.isArray(b.To) || b.To.length === 0) return 'error building message: no recipients (to, cc, bcc) set';
  for (const to of b.To) if (typeof to?.Email !== 'string' || !to.Email.includes('@')) return `invalid To address: ${to?.Email}`;
  return null;
}

export async function startMailpitDouble(opts: { auth?: { user: string; pass: string } } = {}): Promise<MailpitDouble> {
  const messages: MailpitSendBody[] = [];
  const ids: string[] = [];
  const created: string[] = [];
  const authorizations: (string | undefined)[] = [];
  let failures: { left: number; status: number } = { left: 0, status: 500 };
  let down = false;
  let delayMs = 0;
  const expectedAuth = opts.auth ? `Basic ${Buffer.from(`${opts.auth.user}:${opts.auth.pass}`).toString('base64')}` : null;

  const answer = (res: http.ServerResponse, status: number, body: unknown) => {
    const send = () => {
      if (res.destroyed) return;
      const text = typeof body === 'string' ? body : JSON.stringify(body);
      res.writeHead(status, { 'content-type': typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/json' });
      res.end(typeof body === 'string' ? body : `${text}\n`);
    };
    if (delayMs > 0) setTimeout(send, delayMs);
    else send();
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY) chunks.push(chunk);
    });
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0];
      if (down) return answer(res, 503, 'Service Unavailable');
      if (expectedAuth && req.headers.authorization !== expectedAuth) {
        res.setHeader('www-authenticate', 'Basic realm="Mailpit"');
        return answer(res, 401, 'Unauthorised.\n');
      }
      if (req.method === 'POST' && path === '/api/v1/send') {
        authorizations.push(req.headers.authorization);
        if (failures.left > 0) {
          failures.left--;
          return answer(res, failures.status, { Error: `double: failing with ${failures.status}` });
        }
        if (size > MAX_BODY) return answer(res, 413, { Error: 'http: request body too large' });
        let body: unknown;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch (err) {
          return answer(res, 400, { Error: (err as Error).message });
        }
        const problem = invalid(body);
        if (problem) return answer(res, 400, { Error: problem });
        const id = randomBytes(16).toString('base64url').slice(0, 22);
        messages.push(body as MailpitSendBody);
        ids.push(id);
        created.push(new Date().toISOString());
        return answer(res, 200, { ID: id });
      }
      if (req.method === 'GET' && path === '/api/v1/messages') {
        const list = messages.map((m, i) => ({
          ID: ids[i],
          MessageID: (m.Headers?.['Message-ID'] ?? `${ids[i]}@mailpit`).replace(/^<|>$/g, ''),
          Read: false,
          From: { Name: m.From.Name ?? '', Address: m.From.Email },
          To: m.To.map((t) => ({ Name: t.Name ?? '', Address: t.Email })),
          Cc: [],
          Bcc: [],
          ReplyTo: [],
          Subject: m.Subject ?? '',
          Created: created[i],
          Tags: m.Tags ?? [],
          Size: Buffer.byteLength(JSON.stringify(m)),
          Attachments: 0,
          Snippet: (m.Text ?? '').replace(/\s+/g, ' ').trim().slice(0, 250),
        }));
        list.reverse();
        return answer(res, 200, {
          total: list.length,
          unread: list.length,
          count: list.length,
          messages_count: list.length,
          start: 0,
          tags: [],
          messages: list,
        });
      }
      return answer(res, 404, '404 page not found\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    messages,
    ids,
    authorizations,
    failNext(n, status) {
      failures = { left: n, status };
    },
    setDown(value) {
      down = value;
    },
    setDelay(ms) {
      delayMs = ms;
    },
    close() {
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
