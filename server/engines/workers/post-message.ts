/**
 * postMessage that moves `transfer` when the runtime lets it, else copies. Node 21 and later refuse (DataCloneError)
 * to move a buffer they mark untransferable: Buffer's shared pool and memory a native addon owns, such as sharp's
 * output; Node 20 copied those silently. Moving only saves a copy: the receiver gets the same message either way.
 */
export interface MessageTarget {
  postMessage(value: unknown, transferList?: readonly ArrayBuffer[]): void;
}

export function postMoving(target: MessageTarget, message: unknown, transfer: readonly ArrayBuffer[]): void {
  if (transfer.length === 0) {
    target.postMessage(message);
    return;
  }
  try {
    target.postMessage(message, transfer);
  } catch (err) {
    // Refused before anything was detached: the same message, copied.
    if (!(err instanceof Error) || err.name !== 'DataCloneError') throw err;
    target.postMessage(message);
  }
}
