/**
 * A small leveled logger writing one line per event to stderr. Secrets never reach it: callers log facts
 * (counts, paths, codes), not request bodies or headers; as a second line of defence, a field whose name looks
 * like a credential (`api_key`, `token`, `password`, `authorization`, ...) is written as `[redacted]`.
 *
 * Two formats (LOG_FORMAT): `text`, a readable line `time LEVEL message key=value ...`, and `json`, one JSON
 * object per line `{"time","level","msg",...fields}` for log collectors.
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
export type LogFormat = 'text' | 'json';
export const LOG_FORMATS = ['text', 'json'] as const;

/** Structured facts of one log line (request id, route, status, ...): numbers, strings, booleans, null. */
export type LogFields = Record<string, string | number | boolean | null | undefined>;

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };
/** Names a field never carries the value of. */
const SECRET_FIELD = /pass(word)?|secret|token|api[-_]?key|authorization|cookie|credential/i;
/** Reserved keys of a JSON line: a field of that name cannot replace them. */
const RESERVED = new Set(['time', 'level', 'msg']);

function cleanFields(fields: LogFields | undefined): [string, string | number | boolean | null][] {
  if (!fields) return [];
  const out: [string, string | number | boolean | null][] = [];
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined || RESERVED.has(key)) continue;
    out.push([key, SECRET_FIELD.test(key) ? '[redacted]' : value]);
  }
  return out;
}

/** `key=value`, the value quoted when it holds spaces, quotes or `=`. */
function textField([key, value]: [string, string | number | boolean | null]): string {
  const text = String(value);
  return `${key}=${/[\s"=]/.test(text) || text === '' ? JSON.stringify(text) : text}`;
}

export function createLogger(
  level: LogLevel,
  write: (line: string) => void = (l) => process.stderr.write(l),
  format: LogFormat = 'text',
): Logger {
  const min = ORDER[level];
  const at = (lvl: Exclude<LogLevel, 'silent'>) => (message: string, fields?: LogFields) => {
    if (ORDER[lvl] < min) return;
    const time = new Date().toISOString();
    const extra = cleanFields(fields);
    if (format === 'json') {
      write(`${JSON.stringify({ time, level: lvl, msg: message, ...Object.fromEntries(extra) })}\n`);
    } else {
      const tail = extra.length ? ` ${extra.map(textField).join(' ')}` : '';
      write(`${time} ${lvl.toUpperCase().padEnd(5)} ${message}${tail}\n`);
    }
  };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}
