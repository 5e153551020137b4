import { describe, expect, it } from 'vitest';
import { safeEventId } from '../safe-text.js';
import type { PersonRegisteredEvent, RemoteModelStatusEvent } from '../../../shared/events/face-events.js';
import {
  composePersonRegisteredMail,
  composeRemoteStatusMail,
  escapeHtml,
  messageIdFor,
  mimeFields,
  parseAddress,
  parseAddressList,
  sanitizeSubject,
} from './compose.js';

const from = { email: 'lookout@localhost', name: 'Lookout' };
const to = [{ email: 'security@example.com', name: 'Security' }];

const person: PersonRegisteredEvent = {
  event_type: 'person_registered',
  timestamp: '2025-03-04T05:06:07.890Z',
  source: 'lookout-api',
  camera_id: '<script>alert(1)</script>',
  person_name: "o'brien-&-co",
  face_count: 3,
  detection_method: 'cascade "frontal"',
};

function status(model: string, state: string | null, extra: Partial<RemoteModelStatusEvent> = {}): RemoteModelStatusEvent {
  return {
    event_type: 'remote_model_status',
    timestamp: '2025-03-04T05:06:07.890Z',
    source: 'lookout-processor',
    camera_id: 'cam-1',
    model_name: model,
    model_server: 'http://ovms:8000',
    remote_response:
      state === null
        ? {}
        : { [model]: { model_version_status: [{ version: '1', state, status: { error_code: 'OK', error_message: 'OK' } }] } },
    ...(state === null ? { reachable: false as const } : {}),
    ...extra,
  };
}

describe('escapeHtml', () => {
  it('escapes the five HTML-significant characters', () => {
    expect(escapeHtml(`<a href="x">Tom & Jerry's</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry&#39;s&lt;/a&gt;');
  });
});

describe('addresses', () => {
  it('parses Name <addr>, quoted names and bare addresses', () => {
    expect(parseAddress('Lookout <lookout@localhost>')).toEqual({ email: 'lookout@localhost', name: 'Lookout' });
    expect(parseAddress('  ops@example.com ')).toEqual({ email: 'ops@example.com', name: '' });
    expect(parseAddress('<ops@example.com>')).toEqual({ email: 'ops@example.com', name: '' });
    expect(parseAddressList('"Doe, Jane" <jane@example.com>, bob@example.com')).toEqual([
      { email: 'jane@example.com', name: 'Doe, Jane' },
      { email: 'bob@example.com', name: '' },
    ]);
  });

  it('refuses empty and invalid lists with a message naming the value', () => {
    expect(() => parseAddressList('')).toThrow(/no address/);
    expect(() => parseAddressList(' , ')).toThrow(/no address/);
    expect(() => parseAddressList('not-an-address')).toThrow(/invalid mail address "not-an-address"/);
    expect(() => parseAddressList('a@b.c, Bob <bob at example.com>')).toThrow(/invalid mail address/);
    expect(() => parseAddress('Eve <eve@example.com>\r\nBcc: x@y.z')).toThrow(/control characters/);
  });
});

describe('composePersonRegisteredMail', () => {
  const mail = composePersonRegisteredMail(person, { from, to, eventId: 'ev-1' });

  it('has the facts in both parts and the ids', () => {
    expect(mail.subject).toBe("New person registered: o'brien-&-co");
    expect(mail.eventId).toBe('ev-1');
    expect(mail.from).toEqual(from);
    expect(mail.to).toEqual(to);
    for (const fact of [
      'Person',
      'Face count',
      'Detection method',
      'Camera',
      'Source',
      'Time',
      'lookout-api',
      '2025-03-04T05:06:07.890Z',
    ]) {
      expect(mail.html).toContain(fact);
      expect(mail.text).toContain(fact);
    }
    expect(mail.html).toMatch(/<td[^>]*>3<\/td>/);
    expect(mail.text).toMatch(/Face count:\s+3/);
  });

  it('escapes event values in the HTML and keeps them literal in the text', () => {
    expect(mail.html).toContain('o&#39;brien-&amp;-co');
    expect(mail.html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(mail.html).toContain('cascade &quot;frontal&quot;');
    expect(mail.html).not.toContain('<script>');
    expect(mail.html).not.toContain("o'brien");
    expect(mail.html).toContain('<title>New person registered: o&#39;brien-&amp;-co</title>');
    expect(mail.text).toContain("o'brien-&-co");
    expect(mail.text).toContain('<script>alert(1)</script>');
  });

  it('keeps CR/LF out of the subject', () => {
    const evil = composePersonRegisteredMail({ ...person, person_name: 'eve\r\nBcc: all@example.com\nX: y' }, { from, to, eventId: 'e' });
    expect(evil.subject).not.toMatch(/[\r\n]/);
    expect(evil.subject).toBe('New person registered: eve Bcc: all@example.com X: y');
  });
});

describe('composeRemoteStatusMail', () => {
  const model = 'face-detection-retail-0005';

  it('names first, unreachable, back and changed states in the subject', () => {
    const subject = (e: RemoteModelStatusEvent, previousState: string | null) =>
      composeRemoteStatusMail(e, { from, to, eventId: 'x', previousState }).subject;
    expect(subject(status(model, 'AVAILABLE'), null)).toBe(`Model ${model}: AVAILABLE`);
    expect(subject(status(model, null), 'AVAILABLE')).toBe(`Model server unreachable: ${model}`);
    expect(subject(status(model, null), null)).toBe(`Model server unreachable: ${model}`);
    expect(subject(status(model, 'AVAILABLE'), 'unreachable')).toBe(`Model server back: ${model} is AVAILABLE`);
    expect(subject(status(model, 'AVAILABLE'), 'LOADING')).toBe(`Model ${model}: LOADING -> AVAILABLE`);
    expect(subject(status('evil\r\nBcc: x@y.z', 'AVAILABLE'), null)).not.toMatch(/[\r\n]/);
  });

  it('has model, server, states, time, camera, source and the response as escaped JSON', () => {
    const event = status(model, 'AVAILABLE', { camera_id: '<script>alert(1)</script>', model_server: 'http://user:pw@ovms:8000' });
    (event.remote_response as Record<string, unknown>).note = "<b>o'brien-&-co</b>";
    const mail = composeRemoteStatusMail(event, { from, to, eventId: 'ev-2', previousState: 'LOADING' });
    for (const part of [mail.html, mail.text]) {
      for (const fact of [
        model,
        'http://ovms:8000',
        'AVAILABLE',
        'LOADING',
        '2025-03-04T05:06:07.890Z',
        'lookout-processor',
        'model_version_status',
      ]) {
        expect(part).toContain(fact);
      }
      expect(part).not.toContain('user:pw');
    }
    expect(mail.html).toMatch(/<pre[^>]*>\{\n {2}&quot;face-detection-retail-0005&quot;: \{/);
    expect(mail.html).toContain('&lt;b&gt;o&#39;brien-&amp;-co&lt;/b&gt;');
    expect(mail.html).not.toContain('<script>');
    expect(mail.html).not.toContain('<b>');
    expect(mail.text).toContain('"note": "<b>o\'brien-&-co</b>"');
    expect(mail.text).toContain('<script>alert(1)</script>');
  });

  it('says "(none)" for a first status and {} for an unreachable server', () => {
    const mail = composeRemoteStatusMail(status(model, null), { from, to, eventId: 'ev-3', previousState: null });
    expect(mail.text).toMatch(/State:\s+unreachable/);
    expect(mail.text).toMatch(/Previous state:\s+\(none/);
    expect(mail.html).toMatch(/<pre[^>]*>\{\}<\/pre>/);
  });
});

describe('ids and MIME fields', () => {
  it('keeps plain event ids and makes others safe but distinct', () => {
    expect(messageIdFor('0b9c-11ef.42_x')).toBe('<0b9c-11ef.42_x@lookout>');
    expect(safeEventId('a/b')).toMatch(/^a_b-[0-9a-f]{12}$/);
    expect(safeEventId('a/b')).not.toBe(safeEventId('a_b'));
    expect(safeEventId('a:b')).not.toBe(safeEventId('a/b'));
    expect(safeEventId('../../etc/passwd')).not.toMatch(/[/]|^\./);
    expect(messageIdFor('x>\r\nBcc: y')).toMatch(/^<[A-Za-z0-9._-]+@lookout>$/);
  });

  it('sanitizes subjects and builds nodemailer fields', () => {
    expect(sanitizeSubject('a\r\n\tb\u0000c')).toBe('a b c');
    const fields = mimeFields({ from, to, subject: 's\nt', html: '<p>h</p>', text: 't', eventId: 'ev-9' });
    expect(fields).toMatchObject({
      from: { name: 'Lookout', address: 'lookout@localhost' },
      to: [{ name: 'Security', address: 'security@example.com' }],
      subject: 's t',
      messageId: '<ev-9@lookout>',
    });
  });
});
