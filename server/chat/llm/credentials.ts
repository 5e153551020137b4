/**
 * Where the LLM client's credentials come from: the configured endpoint parsed without ever echoing it (it may hold
 * `user:password`), and the Authorization header, from the API key, else the token file (re-read only when it
 * changes, as Kubernetes rotates projected tokens), else the endpoint's Basic credentials. It also remembers every
 * secret it has held, so the client can redact them from any message. Part of llm-client.ts.
 */
import fs from 'node:fs/promises';
import { ApiError } from '../../http/errors.js';
import type { Logger } from '../../logger.js';

/** Visible ASCII only: anything else would make fetch throw an error that quotes the header value. */
const TOKEN_CHARS = /^[\x21-\x7e]+$/;

export interface Endpoint {
  base: string;
  /** The base URL without credentials, query or fragment: safe to show. */
  display: string;
  /** `user:password` from the URL, sent as Basic auth when nothing else is configured. */
  basic?: string;
}

/** Parses the configured endpoint; the message never echoes it (it may hold credentials). */
export function parseEndpoint(endpoint: string): Endpoint {
  let url: URL;
  try {
    url = new URL(endpoint.trim());
  } catch {
    throw new TypeError('the LLM endpoint (CHAT_ENDPOINT) is not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new TypeError('the LLM endpoint (CHAT_ENDPOINT) must be an http or https URL');
  const basic = url.username || url.password ? `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}` : undefined;
  const path = url.pathname
    .replace(/\/+$/, '')
    .replace(/\/chat\/completions$/, '')
    .replace(/\/models$/, '')
    .replace(/\/v1$/, '')
    .replace(/\/+$/, '');
  const base = url.origin + path;
  return { base, display: base, basic };
}

/** Where the Authorization header comes from, with the token file cached on its stat signature. */
export class Credentials {
  private cached: { sig: string; token: string } | null = null;
  private readonly seen: string[] = [];

  constructor(
    private readonly apiKey: string | undefined,
    private readonly tokenFile: string | undefined,
    private readonly basic: string | undefined,
    private readonly log: Logger | undefined,
  ) {
    if (apiKey !== undefined && !TOKEN_CHARS.test(apiKey)) throw new TypeError('CHAT_API_KEY holds characters a bearer token cannot have');
    for (const s of [apiKey, basic, basic && Buffer.from(basic).toString('base64'), basic?.split(':').slice(1).join(':')]) {
      if (s) this.seen.push(s);
    }
  }

  /** Every secret value this client has held, longest first (so a key is redacted before its parts). */
  secrets(): string[] {
    return [...this.seen].sort((a, b) => b.length - a.length);
  }

  async header(): Promise<string | undefined> {
    if (this.apiKey) return `Bearer ${this.apiKey}`;
    if (this.tokenFile) return `Bearer ${await this.fileToken(this.tokenFile)}`;
    if (this.basic) return `Basic ${Buffer.from(this.basic).toString('base64')}`;
    return undefined;
  }

  /**
   * The token in the file, read again only when its mtime, size or inode changed (Kubernetes rotates projected
   * tokens by swapping a symlink, which stat follows). A failed read keeps the last good token.
   */
  private async fileToken(file: string): Promise<string> {
    let sig: string;
    try {
      const st = await fs.stat(file);
      sig = `${st.mtimeMs}:${st.size}:${st.ino}`;
    } catch (err) {
      if (this.cached) return this.cached.token;
      throw new ApiError(
        'llm_unavailable',
        `The LLM token file ${file} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'}).`,
      );
    }
    if (this.cached?.sig === sig) return this.cached.token;
    let token: string;
    try {
      token = (await fs.readFile(file, 'utf8')).trim();
    } catch (err) {
      if (this.cached) return this.cached.token;
      throw new ApiError(
        'llm_unavailable',
        `The LLM token file ${file} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'}).`,
      );
    }
    if (!token) throw new ApiError('llm_unavailable', `The LLM token file ${file} is empty.`);
    if (!TOKEN_CHARS.test(token)) throw new ApiError('llm_unavailable', `The LLM token file ${file} does not hold a valid bearer token.`);
    if (!this.seen.includes(token)) {
      this.seen.push(token);
      // Old tokens stay redacted for a while; a long-running server must not grow this list forever.
      if (this.seen.length > 8) this.seen.splice(this.apiKey || this.basic ? 1 : 0, 1);
    }
    if (this.cached) this.log?.info(`chat: LLM token file ${file} changed, token reloaded`);
    this.cached = { sig, token };
    return token;
  }
}
