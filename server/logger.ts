/**
 * A small leveled logger writing one line per event to stderr: time, level, message. Secrets never reach it:
 * callers log facts (counts, paths, codes), not request bodies or headers.
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

export interface Logger {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export function createLogger(level: LogLevel, write: (line: string) => void = (l) => process.stderr.write(l)): Logger {
  const min = ORDER[level];
  const at = (lvl: Exclude<LogLevel, 'silent'>) => (message: string) => {
    if (ORDER[lvl] >= min) write(`${new Date().toISOString()} ${lvl.toUpperCase().padEnd(5)} ${message}\n`);
  };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}
