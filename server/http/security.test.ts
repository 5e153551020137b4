import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { allowedHostsFor, parseHostList, parseOriginList, webSecurity, type WebSecurityOptions } from './security.js';

/** A tiny app behind the middleware: GET and POST /x answer 200 when the request got through. */
function appWith(options: Partial<WebSecurityOptions> = {}): Hono {
  const app = new Hono();
  app.use('*', webSecurity({ allowedHosts: allowedHostsFor(undefined, '127.0.0.1'), port: 8080, requireBodyType: true, ...options }));
  app.on(['GET', 'POST', 'DELETE'], '/x', (c) => c.json({ ok: true }));
  return app;
}

async function ask(app: Hono, headers: Record<string, string>, init: RequestInit = {}): Promise<{ status: number; code?: string }> {
  const res = await app.request('http://127.0.0.1:8080/x', { ...init, headers: { host: '127.0.0.1:8080', ...headers } });
  const body = (await res.json()) as { error?: { code: string } };
  return { status: res.status, code: body.error?.code };
}

describe('the allowed lists', () => {
  it('parses host names and addresses, normalised, and refuses a scheme, a port or a path', () => {
    expect(parseHostList(' Kiosk.Example.org, 127.0.0.1 ,::1,[fe80::1],lookout-api.')).toEqual([
      'kiosk.example.org',
      '127.0.0.1',
      '[::1]',
      '[fe80::1]',
      'lookout-api',
    ]);
    expect(parseHostList('*.Example.org')).toEqual(['*.example.org']);
    expect(parseHostList('')).toEqual([]);
    for (const bad of ['http://a', 'a:8080', 'a/b', 'a b', 'a..b', '*', 'a.*.b'])
      expect(() => parseHostList(bad), bad).toThrow(/not a host name/);
  });

  it('parses origins as scheme://host[:port] and refuses paths, credentials and other schemes', () => {
    expect(parseOriginList('https://Kiosk.example.org, http://127.0.0.1:5173/,http://a.example:80')).toEqual([
      'https://kiosk.example.org',
      'http://127.0.0.1:5173',
      'http://a.example',
    ]);
    for (const bad of ['kiosk.example.org', 'https://a.example/app', 'https://u:p@a.example', 'ftp://a.example', 'https://a?x'])
      expect(() => parseOriginList(bad), bad).toThrow(/not an origin/);
  });

  it('adds the listen address to the hosts unless it is a wildcard, and replaces the default with a list', () => {
    expect(allowedHostsFor(undefined, '127.0.0.1')).toEqual(['localhost', '127.0.0.1', '[::1]']);
    expect(allowedHostsFor([], 'kiosk.lan')).toEqual(['localhost', '127.0.0.1', '[::1]', 'kiosk.lan']);
    expect(allowedHostsFor(['lookout-api'], '0.0.0.0')).toEqual(['lookout-api']);
    expect(allowedHostsFor(['a'], '::')).toEqual(['a']);
    expect(allowedHostsFor(['a'], 'fd00::5')).toEqual(['a', '[fd00::5]']);
  });
});

describe('the Host rule (DNS rebinding)', () => {
  const app = appWith({ allowedHosts: allowedHostsFor(['lookout-api', 'localhost', '*.kiosks.example'], '0.0.0.0') });

  it('answers an allowed name on any port, a name under an allowed *.domain, and any IP address', async () => {
    for (const host of [
      'lookout-api:8080',
      'LOOKOUT-API',
      'localhost:3000',
      'k1.kiosks.example',
      '10.1.2.3:8080',
      '[fd00::1]:8080',
      '127.0.0.1',
    ])
      expect((await ask(app, { host })).status, host).toBe(200);
  });

  it('refuses any other name with 421, whatever the method', async () => {
    for (const host of [
      'evil.example:8080',
      'lookout-api.evil.example',
      'localhost.evil.example',
      'kiosks.example',
      'evilkiosks.example',
      'a@127.0.0.1',
      'x/y',
    ]) {
      expect(await ask(app, { host }), host).toEqual({ status: 421, code: 'host_not_allowed' });
      expect(await ask(app, { host }, { method: 'DELETE' }), host).toEqual({ status: 421, code: 'host_not_allowed' });
    }
  });
});

describe('the Origin rule (other web pages)', () => {
  const app = appWith({ allowedOrigins: ['https://kiosk.example.org'] });
  const json = { 'content-type': 'application/json' };

  it('lets programs through: no Origin, no Sec-Fetch-Site', async () => {
    expect((await ask(app, json, { method: 'POST', body: '{}' })).status).toBe(200);
  });

  it("accepts the server's own origin, by the Host or an allowed host on its port, and a listed one", async () => {
    for (const origin of ['http://127.0.0.1:8080', 'http://localhost:8080', 'https://127.0.0.1:8080', 'https://kiosk.example.org'])
      expect((await ask(app, { ...json, origin }, { method: 'POST', body: '{}' })).status, origin).toBe(200);
    // Behind a proxy on another port: the origin is the Host the request came to.
    expect(
      (await ask(app, { ...json, host: 'localhost:5173', origin: 'http://localhost:5173' }, { method: 'POST', body: '{}' })).status,
    ).toBe(200);
  });

  it('refuses any other origin with 403: another site, another port of this host, a sandboxed page', async () => {
    for (const origin of [
      'http://evil.example',
      'http://127.0.0.1:3000',
      'http://localhost:5173',
      'null',
      'https://kiosk.example.org:444',
    ]) {
      expect(await ask(app, { ...json, origin }, { method: 'POST', body: '{}' }), origin).toEqual({
        status: 403,
        code: 'forbidden_origin',
      });
      expect(await ask(app, { origin, 'sec-fetch-site': 'cross-site' }), origin).toEqual({ status: 403, code: 'forbidden_origin' });
    }
  });

  it('refuses cross-site and same-site loads without an Origin, but not a followed link', async () => {
    for (const site of ['cross-site', 'same-site']) {
      expect(await ask(app, { 'sec-fetch-site': site, 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'image' })).toEqual({
        status: 403,
        code: 'forbidden_origin',
      });
      expect(await ask(app, { 'sec-fetch-site': site, 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'iframe' })).toEqual({
        status: 403,
        code: 'forbidden_origin',
      });
      expect((await ask(app, { 'sec-fetch-site': site, 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' })).status).toBe(200);
    }
    for (const site of ['same-origin', 'none']) expect((await ask(app, { 'sec-fetch-site': site })).status).toBe(200);
  });

  it('answers CORS, preflight included, for a listed origin only', async () => {
    const preflight = await app.request('http://127.0.0.1:8080/x', {
      method: 'OPTIONS',
      headers: { host: '127.0.0.1:8080', origin: 'https://kiosk.example.org', 'access-control-request-method': 'POST' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('https://kiosk.example.org');
    expect(preflight.headers.get('access-control-allow-headers')).toMatch(/content-type/);
    const withToken = await app.request('http://127.0.0.1:8080/x', {
      method: 'OPTIONS',
      headers: {
        host: '127.0.0.1:8080',
        origin: 'https://kiosk.example.org',
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'authorization',
      },
    });
    expect(withToken.headers.get('access-control-allow-headers')?.split(',')).toContain('authorization');
    const answer = await app.request('http://127.0.0.1:8080/x', {
      headers: { host: '127.0.0.1:8080', origin: 'https://kiosk.example.org', authorization: 'Bearer x' },
    });
    expect(answer.headers.get('access-control-expose-headers')?.split(',')).toContain('www-authenticate');
    const own = await app.request('http://127.0.0.1:8080/x', { headers: { host: '127.0.0.1:8080', origin: 'http://127.0.0.1:8080' } });
    expect(own.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('the body type rule (state-changing requests)', () => {
  const app = appWith();

  it('takes JSON (and +json) and multipart, and no body without a type', async () => {
    for (const type of [
      'application/json',
      'application/json; charset=utf-8',
      'application/merge-patch+json',
      'multipart/form-data; boundary=x',
    ])
      expect((await ask(app, { 'content-type': type }, { method: 'POST', body: '{}' })).status, type).toBe(200);
    expect((await ask(app, {}, { method: 'POST' })).status).toBe(200);
    expect((await ask(app, { 'content-length': '0' }, { method: 'DELETE' })).status).toBe(200);
  });

  it('refuses what a cross-site form or a simple request sends with 415, and a body without a type', async () => {
    for (const type of ['text/plain', 'text/plain;charset=UTF-8', 'application/x-www-form-urlencoded', 'application/jsonx', 'text/json'])
      expect(await ask(app, { 'content-type': type }, { method: 'POST', body: '{}' }), type).toEqual({
        status: 415,
        code: 'unsupported_media_type',
      });
    expect(await ask(app, { 'content-length': '2' }, { method: 'POST', body: new Uint8Array([123, 125]) })).toEqual({
      status: 415,
      code: 'unsupported_media_type',
    });
  });

  it('leaves GET alone, and the model servers (no body rule) take raw bodies', async () => {
    expect((await ask(app, { 'content-type': 'text/plain' })).status).toBe(200);
    const raw = appWith({ requireBodyType: false });
    expect((await ask(raw, { 'content-type': 'image/jpeg' }, { method: 'POST', body: 'x' })).status).toBe(200);
  });
});
