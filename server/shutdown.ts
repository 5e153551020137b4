/**
 * SIGINT/SIGTERM for a server process: log, close once, exit 0; exit anyway after `graceMs` (a stuck close must not
 * keep a pod terminating). Returns whether a stop has begun, for start-up code still running.
 */
import type { Logger } from './logger.js';

export function exitOnSignals(log: Logger, close: () => Promise<void>, graceMs = 5000): () => boolean {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info(`${signal}: shutting down`);
    void close().finally(() => process.exit(0));
    setTimeout(() => process.exit(0), graceMs).unref();
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  return () => stopping;
}
