/**
 * The envelope every recognition worker speaks, on the server (worker_threads) and in the browser (Web
 * Workers): a worker's operations are one map type, `{ op: { args; result } }`, so a caller's
 * `run('detect', args)` is typed with detect's result and no reply needs checking for the wrong kind.
 */

/** One operation: what it takes and what it answers. */
export interface OpSpec {
  args: unknown;
  result: unknown;
}

/** A worker's operations by name (an interface whose every member is an OpSpec). */
export type OpsOf<Ops> = { [K in keyof Ops]: OpSpec };

export type OpName<Ops> = keyof Ops & string;
export type ArgsOf<Ops, K extends keyof Ops> = Ops[K] extends OpSpec ? Ops[K]['args'] : never;
export type ResultOf<Ops, K extends keyof Ops> = Ops[K] extends OpSpec ? Ops[K]['result'] : never;

/** A request: `id` pairs it with its reply. */
export type OpRequest<Ops> = { [K in OpName<Ops>]: { id: number; op: K; args: ArgsOf<Ops, K> } }[OpName<Ops>];

/** A reply; `result` is the requested op's result (the id says which op that was). */
export type OpReply = { id: number; ok: true; result: unknown } | { id: number; ok: false; error: string };

/** A worker's implementation: one function per operation. */
export type OpHandlers<Ops> = { [K in OpName<Ops>]: (args: ArgsOf<Ops, K>) => ResultOf<Ops, K> | Promise<ResultOf<Ops, K>> };

/** The message of anything thrown, including the plain objects some native runtimes reject with. */
export function errorText(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (typeof err === 'object' && err && 'message' in err) return String((err as { message: unknown }).message);
  return String(err);
}

/** Runs a request's handler and builds the reply; a failure (or an unknown op) becomes an error reply. */
export async function answer<Ops>(handlers: OpHandlers<Ops>, request: OpRequest<Ops>): Promise<OpReply> {
  const { id, op, args } = request as { id: number; op: OpName<Ops>; args: never };
  try {
    const handler = handlers[op] as ((args: unknown) => unknown) | undefined;
    if (typeof handler !== 'function') throw new Error(`unknown operation "${String(op)}"`);
    return { id, ok: true, result: await handler(args) };
  } catch (err) {
    return { id, ok: false, error: errorText(err) };
  }
}
