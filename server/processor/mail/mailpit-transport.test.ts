import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type MailpitDouble, startMailpitDouble } from '../../../test/helpers/mailpit-double.js';
import { createMailpitTransport } from './mailpit-transport.js';
import type { MailMessage } from './types.js';
import { mailFailure } from '../../../test/helpers/mail-failure.js';

const message: MailMessage = {
  from: { email: 'lookout@localhost', name: 'Lookout' },
  to: [
    { email: 'security@example.com', name: 'Security' },
    { email: 'oncall@example.com', name: '' },
  ],
  subject: 'New person registered: alice',
  html: '<p>alice</p>',
  text: 'alice',
  eventId: 'evt-42',
};

describe('Mailpit transport', () => {
  let mailpit: MailpitDouble;
  beforeEach(async () => {
    mailpit = await startMailpitDouble();
  });
  afterEach(async () => {
    await mailpit.close();
  });

  it("posts Mailpit's send JSON and returns Mailpit's ID", async () => {
    const transport = createMailpitTransport(mailpit.url, 2000);
    expect(transport.kind).toBe('mailpit');
    expect(transport.target).toBe(mailpit.url);
    const { id } = await transport.send(message);

    expect(mailpit.messages).toEqual([
      {
        From: { Email: 'lookout@localhost', Name: 'Lookout' },
        To: [
          { Email: 'security@example.com', Name: 'Security' },
          { Email: 'oncall@example.com', Name: '' },
        ],
        Subject: 'New person registered: alice',
        HTML: '<p>alice</p>',
        Text: 'alice',
        Headers: { 'Message-ID': '<evt-42@lookout>' },
        Tags: ['lookout'],
      },
    ]);
    expect(id).toBe(mailpit.ids[0]);
    expect(mailpit.authorizations).toEqual([undefined]);

    const list = (await (await fetch(`${mailpit.url}/api/v1/messages`)).json()) as {
      total: number;
      messages: { ID: string; MessageID: string }[];
    };
    expect(list.total).toBe(1);
    expect(list.messages[0]).toMatchObject({ ID: id, MessageID: 'evt-42@lookout' });
  });

  it('sends credentials from the URL as Basic auth and keeps them out of target', async () => {
    await mailpit.close();
    mailpit = await startMailpitDouble({ auth: { user: 'ops', pass: 'p@ss:w0rd' } });
    const withCreds = mailpit.url.replace('http://', 'http://ops:p%40ss%3Aw0rd@');
    const transport = createMailpitTransport(`${withCreds}/`, 2000);
    expect(transport.target).toBe(mailpit.url);
    await transport.send(message);
    expect(mailpit.authorizations).toEqual([`Basic ${Buffer.from('ops:p@ss:w0rd').toString('base64')}`]);

    const wrong = createMailpitTransport(mailpit.url.replace('http://', 'http://ops:nope@'), 2000);
    const err = await mailFailure(wrong.send(message));
    expect(err.permanent).toBe(true);
    expect(err.message).toContain('401');
    expect(err.message).not.toContain('nope');
  });

  it('treats 503 (down) as temporary and sends once it is back', async () => {
    const transport = createMailpitTransport(mailpit.url, 2000);
    mailpit.setDown(true);
    const err = await mailFailure(transport.send(message));
    expect(err.permanent).toBe(false);
    expect(err.message).toMatch(/HTTP 503/);
    mailpit.setDown(false);
    await transport.send(message);
    expect(mailpit.messages).toHaveLength(1);
  });

  it('treats 400 as permanent, 429 and 500 as temporary, and quotes the body', async () => {
    const transport = createMailpitTransport(mailpit.url, 2000);
    mailpit.failNext(1, 400);
    const bad = await mailFailure(transport.send(message));
    expect(bad.permanent).toBe(true);
    expect(bad.message).toContain('HTTP 400');
    expect(bad.message).toContain('double: failing with 400');
    mailpit.failNext(1, 429);
    expect((await mailFailure(transport.send(message))).permanent).toBe(false);
    mailpit.failNext(1, 500);
    expect((await mailFailure(transport.send(message))).permanent).toBe(false);
    expect(mailpit.messages).toHaveLength(0);
  });

  it("gets a real 400 from the double's validation for a message without recipients", async () => {
    const transport = createMailpitTransport(mailpit.url, 2000);
    const err = await mailFailure(transport.send({ ...message, to: [] }));
    expect(err.permanent).toBe(true);
    expect(err.message).toMatch(/HTTP 400: \{"Error":"error building message: no recipients/);
  });

  it('gives up after the timeout with a temporary error', async () => {
    const transport = createMailpitTransport(mailpit.url, 200);
    mailpit.setDelay(2000);
    const started = Date.now();
    const err = await mailFailure(transport.send(message));
    expect(Date.now() - started).toBeLessThan(1500);
    expect(err.permanent).toBe(false);
    expect(err.message).toContain('no answer within 200 ms');
  });

  it('treats a refused connection as temporary', async () => {
    const url = mailpit.url;
    await mailpit.close();
    const err = await mailFailure(createMailpitTransport(url, 2000).send(message));
    expect(err.permanent).toBe(false);
    expect(err.message).toContain('ECONNREFUSED');
    mailpit = await startMailpitDouble();
  });
});
