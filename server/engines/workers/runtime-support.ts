/** Small helpers the model hosts (embedding, objects, YOLO) share. */

/** The message of anything thrown (one definition for every worker and host). */
export { errorText as errorMessage } from '../../../shared/recognition/worker-messages.js';

/**
 * Runs `fn`, then removes any uncaughtException/unhandledRejection listeners it added. Emscripten's Node glue
 * (tfjs WASM) installs process-wide handlers that rethrow; the host's own error handling must stay in charge.
 */
export async function keepingProcessHandlers<T>(fn: () => Promise<T>): Promise<T> {
  const events = ['uncaughtException', 'unhandledRejection'] as const;
  const listeners = (e: (typeof events)[number]) => process.listeners(e as 'uncaughtException') as ((...args: unknown[]) => void)[];
  const before = events.map((e) => new Set(listeners(e)));
  try {
    return await fn();
  } finally {
    events.forEach((e, i) => {
      for (const l of listeners(e)) if (!before[i].has(l)) process.removeListener(e, l);
    });
  }
}
