/**
 * A minimal browser for driving the IdP's pages with fetch: a cookie jar honouring cookie paths and expiry, and
 * manual redirects (each hop is checked by the tests, and the app's redirect URI is never fetched).
 */
interface Cookie {
  value: string;
  path: string;
}

export class Browser {
  private readonly jar = new Map<string, Cookie>();

  async request(url: string, init: RequestInit = {}): Promise<Response> {
    const target = new URL(url);
    const cookie = [...this.jar.entries()]
      .filter(([, c]) => target.pathname === c.path || target.pathname.startsWith(c.path.endsWith('/') ? c.path : `${c.path}/`))
      .map(([name, c]) => `${name}=${c.value}`)
      .join('; ');
    const headers = new Headers(init.headers);
    if (cookie) headers.set('cookie', cookie);
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const line of res.headers.getSetCookie()) this.store(line);
    return res;
  }

  get(url: string): Promise<Response> {
    return this.request(url);
  }

  postForm(url: string, fields: Record<string, string>): Promise<Response> {
    return this.request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    });
  }

  /** Follows redirects from `url` while they stay on `origin`; returns the last response and the URL that gave it. */
  async follow(url: string, origin: string, first?: Response): Promise<{ res: Response; url: string }> {
    let current = url;
    let res = first ?? (await this.get(current));
    for (let hops = 0; hops < 10 && res.status >= 300 && res.status < 400; hops++) {
      const next = new URL(res.headers.get('location')!, current).href;
      if (new URL(next).origin !== origin) return { res, url: current };
      await res.arrayBuffer();
      current = next;
      res = await this.get(current);
    }
    return { res, url: current };
  }

  cookieNames(): string[] {
    return [...this.jar.keys()];
  }

  private store(line: string): void {
    const [pair, ...attributes] = line.split(';').map((s) => s.trim());
    const eq = pair.indexOf('=');
    const name = pair.slice(0, eq);
    const value = pair.slice(eq + 1);
    let path = '/';
    let expired = value === '';
    for (const attribute of attributes) {
      const [key, val = ''] = attribute.split('=');
      if (key.toLowerCase() === 'path') path = val || '/';
      if (key.toLowerCase() === 'max-age' && Number(val) <= 0) expired = true;
      if (key.toLowerCase() === 'expires' && Date.parse(val) <= Date.now()) expired = true;
    }
    if (expired) this.jar.delete(name);
    else this.jar.set(name, { value, path });
  }
}
