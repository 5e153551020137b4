/** The HTTP server: where it listens, whom it answers and what it logs. Part of the settings table (settings.ts); documented in docs/settings.md. */
import { z } from 'zod';
import { DEFAULT_ALLOWED_HOSTS, parseHostList, parseOriginList } from '../http/security.js';
import { integer, listOf, type SettingSpec } from './setting-schemas.js';

export const HTTP_SETTINGS = {
  port: { env: 'PORT', schema: integer(0, 65535), default: '8080', doc: 'TCP port of the HTTP server.' },
  host: {
    env: 'HOST',
    schema: z.string().trim().min(1),
    default: '127.0.0.1',
    doc: 'Address to listen on (the container sets 0.0.0.0).',
  },
  allowedHosts: {
    env: 'ALLOWED_HOSTS',
    schema: listOf(parseHostList),
    default: DEFAULT_ALLOWED_HOSTS.join(','),
    doc: 'Host names the server answers for, comma separated (HOST is added; IP addresses always pass); another `Host` is refused with 421, against DNS rebinding. The processor reads it too; the model server and the PPE detector take their own.',
  },
  allowedOrigins: {
    env: 'ALLOWED_ORIGINS',
    schema: listOf(parseOriginList),
    default: '',
    doc: "Origins (`https://host[:port]`) of other web pages that may call the API (with CORS), comma separated; a browser request from any other origin but the server's own is refused with 403.",
  },
  compatIdentifiers: {
    env: 'COMPAT_IDENTIFIERS',
    schema: z.enum(['auto', 'off']),
    default: 'auto',
    doc: "`auto`: requests with Angular's default `Accept` (`application/json, text/plain, */*`), as the original service's frontend sends, get its identifiers (`opencv`/`openvino`, `dlib`) in the fields it reads; `off`: Lookout's (`local`/`remote`, `embedding`) to everyone.",
  },
  logLevel: {
    env: 'LOG_LEVEL',
    schema: z.enum(['debug', 'info', 'warn', 'error', 'silent']),
    default: 'info',
    doc: 'Log level: debug, info, warn, error or silent.',
  },
  logFormat: {
    env: 'LOG_FORMAT',
    schema: z.enum(['text', 'json']),
    default: 'text',
    doc: '`text`: readable lines (`time LEVEL message key=value`); `json`: one JSON object per line (`time`, `level`, `msg` and fields such as `request_id`).',
  },
} as const satisfies Record<string, SettingSpec>;
