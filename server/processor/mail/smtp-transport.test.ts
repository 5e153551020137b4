import fs from 'node:fs/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { generateSelfSignedCert, parseMime, SINK_PASS, SINK_USER, type SmtpSink, startSmtpSink } from '../../../test/helpers/smtp-sink.js';
import { composePersonRegisteredMail } from './compose.js';
import { createSmtpTransport, isPermanentSmtpError } from './smtp-transport.js';
import type { MailMessage, MailTransport } from './types.js';
import { mailFailure } from '../../../test/helpers/mail-failure.js';

const from = { email: 'lookout@localhost', name: 'Lookout' };
const to = [
  { email: 'security@example.com', name: 'Security' },
  { email: 'oncall@example.com', name: '' },
];

const message: MailMessage = composePersonRegisteredMail(
  {
    event_type: 'person_registered',
    timestamp: '2025-03-04T05:06:07.890Z',
    source: 'lookout-api',
    camera_id: '<script>alert(1)</script>',
    person_name: "o'brien-&-co",
    face_count: 1,
    detection_method: 'cascade',
  },
  { from, to, eventId: 'evt-smtp-1' },
);

const url = (port: number, pass = SINK_PASS) => `smtp://${SINK_USER}:${encodeURIComponent(pass)}@127.0.0.1:${port}`;

describe('SMTP transport (plain, AUTH required)', () => {
  let sink: SmtpSink;
  let transport: MailTransport | undefined;
  beforeAll(async () => {
    sink = await startSmtpSink();
  });
  afterAll(async () => {
    await sink.close();
  });
  afterEach(async () => {
    await transport?.close();
    transport = undefined;
    sink.messages.length = 0;
  });

  it('delivers the message with the right envelope, headers and both parts', async () => {
    transport = createSmtpTransport(url(sink.port), 5000);
    expect(transport.kind).toBe('smtp');
    expect(transport.target).toBe(`smtp://127.0.0.1:${sink.port}`);
    const { id } = await transport.send(message);
    expect(id).toBe('SINK1');

    expect(sink.messages).toHaveLength(1);
    const got = sink.messages[0];
    expect(got.from).toBe('lookout@localhost');
    expect(got.to).toEqual(['security@example.com', 'oncall@example.com']);
    expect(got.user).toBe(SINK_USER);
    expect(got.secure).toBe(false);
    const mime = parseMime(got.raw);
    expect(mime.header('Message-ID')).toBe('<evt-smtp-1@lookout>');
    expect(mime.header('Subject')).toBe("New person registered: o'brien-&-co");
    expect(mime.header('From')).toBe('Lookout <lookout@localhost>');
    expect(mime.header('To')).toBe('Security <security@example.com>, oncall@example.com');
    expect(mime.leaves.map((p) => p.contentType)).toEqual(['text/plain', 'text/html']);
    expect(mime.leaves[0].body).toContain('<script>alert(1)</script>');
    expect(mime.leaves[1].body).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  });

  it('fails permanently (535) on a wrong password, without the password in the message', async () => {
    const secret = 'Wr0ng-Secret:pa55';
    transport = createSmtpTransport(url(sink.port, secret), 5000);
    const err = await mailFailure(transport.send(message));
    expect(err.permanent).toBe(true);
    expect(err.message).toContain('535');
    expect(err.message).toContain(`smtp://127.0.0.1:${sink.port}`);
    for (const form of [secret, encodeURIComponent(secret), Buffer.from(`\u0000${SINK_USER}\u0000${secret}`).toString('base64')]) {
      expect(err.message).not.toContain(form);
      expect(String(err.stack)).not.toContain(form);
    }
    expect(sink.messages).toHaveLength(0);
  });

  it('maps refusals after DATA by reply code: 451 temporary, 550 permanent', async () => {
    transport = createSmtpTransport(url(sink.port), 5000);
    sink.failNext(1, 451);
    expect((await mailFailure(transport.send(message))).permanent).toBe(false);
    sink.failNext(1, 550);
    const err = await mailFailure(transport.send(message));
    expect(err.permanent).toBe(true);
    expect(err.message).toContain('550');
  });

  it('classifies nodemailer errors', () => {
    expect(isPermanentSmtpError({ responseCode: 550 })).toBe(true);
    expect(isPermanentSmtpError({ responseCode: 535, code: 'EAUTH' })).toBe(true);
    expect(isPermanentSmtpError({ responseCode: 503 })).toBe(false);
    expect(isPermanentSmtpError({ responseCode: 421 })).toBe(false);
    expect(isPermanentSmtpError({ responseCode: 452 })).toBe(false);
    expect(isPermanentSmtpError({ code: 'ECONNECTION' })).toBe(false);
    expect(isPermanentSmtpError({ code: 'ETIMEDOUT' })).toBe(false);
    expect(isPermanentSmtpError({ code: 'ECONFIG' })).toBe(true);
  });
});

describe('SMTP transport failures', () => {
  it('fails temporarily when the server is stopped, without the password in the message', async () => {
    const sink = await startSmtpSink();
    const port = sink.port;
    await sink.close();
    const transport = createSmtpTransport(url(port), 2000);
    const err = await mailFailure(transport.send(message));
    expect(err.permanent).toBe(false);
    expect(err.message).toContain(`smtp://127.0.0.1:${port}`);
    expect(err.message).not.toContain(SINK_PASS);
    await transport.close();
  });

  it('fails temporarily when the server never greets', async () => {
    const net = await import('node:net');
    const silent = net.createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as import('node:net').AddressInfo;
    const transport = createSmtpTransport(url(port), 300);
    const started = Date.now();
    const err = await mailFailure(transport.send(message));
    expect(Date.now() - started).toBeLessThan(3000);
    expect(err.permanent).toBe(false);
    await transport.close();
    await new Promise<void>((resolve) => {
      silent.close(() => resolve());
    });
  });
});

describe('SMTP transport over STARTTLS', () => {
  let cert: { key: string; cert: string; dir: string };
  let sink: SmtpSink;
  beforeAll(async () => {
    cert = await generateSelfSignedCert();
    sink = await startSmtpSink({ tls: { key: cert.key, cert: cert.cert } });
  });
  afterAll(async () => {
    await sink?.close();
    if (cert) await fs.rm(cert.dir, { recursive: true, force: true });
  });

  it('upgrades the plain connection when the server offers STARTTLS and the CA is trusted', async () => {
    const transport = createSmtpTransport(url(sink.port), 5000, { tls: { ca: cert.cert } });
    await transport.send(message);
    await transport.close();
    expect(sink.messages).toHaveLength(1);
    expect(sink.messages[0].secure).toBe(true);
    expect(sink.messages[0].user).toBe(SINK_USER);
  });

  it('refuses an untrusted certificate rather than sending in the clear (temporary)', async () => {
    const transport = createSmtpTransport(url(sink.port), 5000);
    const err = await mailFailure(transport.send(message));
    expect(err.permanent).toBe(false);
    expect(err.message).not.toContain(SINK_PASS);
    await transport.close();
    expect(sink.messages).toHaveLength(1);
  });

  it('speaks TLS from the start for smtps://', async () => {
    const tlsSink = await startSmtpSink({ tls: { key: cert.key, cert: cert.cert }, implicitTls: true });
    const transport = createSmtpTransport(`smtps://${SINK_USER}:${SINK_PASS}@127.0.0.1:${tlsSink.port}`, 5000, { tls: { ca: cert.cert } });
    expect(transport.target).toBe(`smtps://127.0.0.1:${tlsSink.port}`);
    await transport.send(message);
    await transport.close();
    expect(tlsSink.messages.map((m) => m.secure)).toEqual([true]);
    await tlsSink.close();
  });
});
