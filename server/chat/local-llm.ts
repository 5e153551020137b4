/**
 * Offline chat: a GGUF model (CHAT_MODEL_PATH) run in this process through `node-llama-cpp` on the CPU, with the
 * runtime limits of the spec: a context of 8192 tokens (or the model's, if smaller), CHAT_THREADS threads, and
 * ONE parallel slot: requests wait in a bounded queue, and one more than the queue holds is refused `llm_busy`.
 *
 * `node-llama-cpp` is not a dependency of the project (its optional GPU packages are huge); it is installed
 * apart, into `<appDir>/.llama`, with its prebuilt CPU binaries, and loaded from there at run time (falling
 * back to a plain `import('node-llama-cpp')`). Nothing is ever downloaded or built at run time.
 *
 * `local-llm-server.ts` puts this behind the OpenAI-compatible HTTP interface that `LlmClient` speaks.
 */
import path from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import type { ChatMessage } from '../../shared/chat/prompt.js';
import { ApiError } from '../http/errors.js';
import type { Logger } from '../logger.js';

export const LOCAL_LLM_INSTALL_COMMAND =
  'npm install --prefix .llama --no-save --no-audit --no-fund --omit=optional node-llama-cpp@3.22.1 @node-llama-cpp/linux-x64@3.22.1';

export interface LocalLlmOptions {
  /** The GGUF file (CHAT_MODEL_PATH). */
  modelPath: string;
  /** Context size in tokens; default 8192, never more than the model was trained for. */
  contextSize?: number;
  /** CPU threads (CHAT_THREADS); default 2. */
  threads?: number;
  /** Requests allowed to wait for the one slot; beyond that `llm_busy`. Default 4. */
  maxQueue?: number;
  /** Default max_tokens of a request that gives none; default 512. */
  maxTokens?: number;
  /** Default temperature of a request that gives none; default 0.7. */
  temperature?: number;
  /** Model id listed by `/v1/models`; default the file name without `.gguf`. */
  modelName?: string;
  /** Where `.llama/node_modules/node-llama-cpp` is looked for; default the working directory. */
  appDir?: string;
  log?: Logger;
}

export interface LocalGenerateOptions {
  maxTokens?: number;
  temperature?: number;
  /** Stops the generation (or leaves the queue); a stopped generation ends with finish reason `abort`. */
  signal?: AbortSignal;
}

export interface LocalCompletion {
  text: string;
  /** OpenAI's finish reasons: `stop` (end of turn), `length` (max_tokens), `abort` (cancelled). */
  finishReason: 'stop' | 'length' | 'abort';
  completionTokens: number;
}

/** Text pieces of a reply, in order; `result` settles once it ended. Iterate to the end or call `cancel()`. */
export interface LocalStream extends AsyncIterable<string> {
  readonly result: Promise<LocalCompletion>;
  cancel(): void;
}

// The small part of node-llama-cpp's API used here (the package is not installed with the project's types).
interface NlcToken {
  readonly __brand?: unknown;
}
type NlcHistoryItem = { type: 'system'; text: string } | { type: 'user'; text: string } | { type: 'model'; response: string[] };
interface NlcChat {
  generateResponse(
    history: NlcHistoryItem[],
    options: {
      maxTokens?: number;
      temperature?: number;
      signal?: AbortSignal;
      stopOnAbortSignal?: boolean;
      onTextChunk?: (text: string) => void;
      onToken?: (tokens: NlcToken[]) => void;
    },
  ): Promise<{ response: string; metadata: { stopReason: string } }>;
  dispose?(): void;
}
interface NlcContext {
  readonly contextSize: number;
  getSequence(): unknown;
  dispose(): Promise<void>;
}
interface NlcModel {
  readonly trainContextSize: number;
  createContext(options: { contextSize: number; threads: number; sequences: number }): Promise<NlcContext>;
  dispose(): Promise<void>;
}
interface NlcLlama {
  loadModel(options: { modelPath: string }): Promise<NlcModel>;
  dispose(): Promise<void>;
}
interface NodeLlamaCpp {
  getLlama(options: Record<string, unknown>): Promise<NlcLlama>;
  LlamaChat: new (options: { contextSequence: unknown; autoDisposeSequence?: boolean }) => NlcChat;
}

/** Loads node-llama-cpp from `<appDir>/.llama`, else from the normal module path; a clear error when absent. */
export async function loadNodeLlamaCpp(appDir: string = process.cwd()): Promise<NodeLlamaCpp> {
  const prefix = path.join(path.resolve(appDir), '.llama', 'node_modules') + path.sep;
  let resolved: string | null = null;
  try {
    resolved = createRequire(prefix).resolve('node-llama-cpp');
  } catch {
    resolved = null;
  }
  try {
    if (resolved) return (await import(pathToFileURL(resolved).href)) as NodeLlamaCpp;
    // A variable specifier keeps bundlers and tsc from insisting the package be installed.
    const name = 'node-llama-cpp';
    return (await import(name)) as NodeLlamaCpp;
  } catch (err) {
    const why = err instanceof Error ? err.message.split('\n')[0] : String(err);
    throw new Error(
      `CHAT_MODEL_PATH is set, but node-llama-cpp cannot be loaded (${why}). ` +
        `Install it next to the app (in ${path.resolve(appDir)}) with: ${LOCAL_LLM_INSTALL_COMMAND}`,
    );
  }
}

/** One slot, a bounded FIFO queue; a waiter leaves the queue when its signal aborts. */
class Slot {
  private busy = false;
  private readonly waiting: Array<{ wake: () => void }> = [];

  constructor(private readonly maxQueue: number) {}

  get active(): number {
    return this.busy ? 1 : 0;
  }

  get queued(): number {
    return this.waiting.length;
  }

  acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const release = () => {
      let held = true;
      return () => {
        if (!held) return;
        held = false;
        const next = this.waiting.shift();
        if (next) next.wake();
        else this.busy = false;
      };
    };
    if (!this.busy) {
      this.busy = true;
      return Promise.resolve(release());
    }
    if (this.waiting.length >= this.maxQueue) {
      return Promise.reject(
        new ApiError('llm_busy', `The local LLM is busy (1 request running, ${this.waiting.length} waiting); try again shortly.`),
      );
    }
    return new Promise((resolve, reject) => {
      const entry = {
        wake: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(release()); // the slot passes straight to this waiter: busy stays true
        },
      };
      const onAbort = () => {
        const i = this.waiting.indexOf(entry);
        if (i >= 0) this.waiting.splice(i, 1);
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(entry);
    });
  }
}

function toHistory(messages: ChatMessage[]): NlcHistoryItem[] {
  const history: NlcHistoryItem[] = messages.map((m) =>
    m.role === 'assistant' ? { type: 'model', response: [m.content] } : { type: m.role === 'system' ? 'system' : 'user', text: m.content },
  );
  // An empty model turn is the one to generate.
  history.push({ type: 'model', response: [] });
  return history;
}

function finishReason(stopReason: string): LocalCompletion['finishReason'] {
  if (stopReason === 'maxTokens') return 'length';
  if (stopReason === 'abort') return 'abort';
  return 'stop';
}

export class LocalLlm {
  /** The model id (`/v1/models`). */
  readonly model: string;
  /** The context size in use, in tokens. */
  readonly contextSize: number;
  readonly threads: number;
  private readonly slot: Slot;
  private closed = false;

  private constructor(
    private readonly llama: NlcLlama,
    private readonly loaded: NlcModel,
    private readonly context: NlcContext,
    private readonly chat: NlcChat,
    private readonly opts: LocalLlmOptions,
    threads: number,
  ) {
    this.model = opts.modelName?.trim() || path.basename(opts.modelPath).replace(/\.gguf$/i, '');
    this.contextSize = context.contextSize;
    this.threads = threads;
    this.slot = new Slot(Math.max(0, opts.maxQueue ?? 4));
  }

  /** Loads node-llama-cpp and the model once (CPU only, prebuilt binaries only). */
  static async load(opts: LocalLlmOptions): Promise<LocalLlm> {
    const threads = opts.threads ?? 2;
    if (!(Number.isInteger(threads) && threads > 0)) throw new RangeError('CHAT_THREADS must be a positive integer');
    const wanted = opts.contextSize ?? 8192;
    if (!(Number.isInteger(wanted) && wanted > 0)) throw new RangeError('the context size must be a positive integer');
    const nlc = await loadNodeLlamaCpp(opts.appDir);
    const log = opts.log;
    const llama = await nlc.getLlama({
      gpu: false,
      build: 'never',
      usePrebuiltBinaries: true,
      skipDownload: true,
      progressLogs: false,
      logLevel: 'warn',
      logger: (level: string, message: string) => {
        const text = `chat: llama.cpp: ${message.trim()}`;
        if (level === 'error' || level === 'fatal') log?.error(text);
        else if (level === 'warn') log?.warn(text);
        else log?.debug(text);
      },
    });
    let model: NlcModel | undefined;
    let context: NlcContext | undefined;
    try {
      model = await llama.loadModel({ modelPath: opts.modelPath });
      const contextSize = Math.min(wanted, model.trainContextSize || wanted);
      context = await model.createContext({ contextSize, threads, sequences: 1 });
      const chat = new nlc.LlamaChat({ contextSequence: context.getSequence(), autoDisposeSequence: false });
      const llm = new LocalLlm(llama, model, context, chat, opts, threads);
      log?.info(`chat: local model ${opts.modelPath} loaded (context ${llm.contextSize}, ${threads} threads)`);
      return llm;
    } catch (err) {
      await context?.dispose().catch(() => {});
      await model?.dispose().catch(() => {});
      await llama.dispose().catch(() => {});
      const why = err instanceof Error ? err.message : String(err);
      throw new Error(`the local chat model ${opts.modelPath} (CHAT_MODEL_PATH) cannot be loaded: ${why}`);
    }
  }

  /** Requests generating now (0 or 1) and waiting. */
  get load(): { active: number; queued: number } {
    return { active: this.slot.active, queued: this.slot.queued };
  }

  /** The whole reply to `messages`. */
  async complete(messages: ChatMessage[], opts: LocalGenerateOptions = {}): Promise<LocalCompletion> {
    const s = await this.stream(messages, opts);
    for await (const _ of s) {
      // drain
    }
    return s.result;
  }

  /**
   * Starts a reply; resolves once this request holds the slot (so `llm_busy` rejects here, before anything was
   * sent). The pieces then arrive as the model produces them.
   */
  async stream(messages: ChatMessage[], opts: LocalGenerateOptions = {}): Promise<LocalStream> {
    if (this.closed) throw new ApiError('llm_unavailable', 'The local LLM has been shut down.');
    if (!Array.isArray(messages) || messages.length === 0) throw new ApiError('bad_request', 'messages must not be empty');
    const maxTokens = opts.maxTokens ?? this.opts.maxTokens ?? 512;
    const temperature = opts.temperature ?? this.opts.temperature ?? 0.7;
    if (!(Number.isInteger(maxTokens) && maxTokens > 0)) throw new ApiError('bad_request', 'max_tokens must be a positive integer');
    if (!(temperature >= 0 && temperature <= 2)) throw new ApiError('bad_request', 'temperature must be between 0 and 2');

    const release = await this.slot.acquire(opts.signal);
    const abort = new AbortController();
    const onOuter = () => abort.abort(opts.signal?.reason);
    if (opts.signal?.aborted) abort.abort(opts.signal.reason);
    else opts.signal?.addEventListener('abort', onOuter, { once: true });

    const pieces: string[] = [];
    let ended = false;
    let failure: unknown;
    let notify: (() => void) | null = null;
    const wake = () => {
      const n = notify;
      notify = null;
      n?.();
    };
    let tokens = 0;
    const result = (async (): Promise<LocalCompletion> => {
      try {
        const r = await this.chat.generateResponse(toHistory(messages), {
          maxTokens,
          temperature,
          signal: abort.signal,
          stopOnAbortSignal: true,
          onTextChunk: (text) => {
            if (!text) return;
            pieces.push(text);
            wake();
          },
          onToken: (t) => {
            tokens += t.length;
          },
        });
        return {
          text: r.response,
          finishReason: abort.signal.aborted ? 'abort' : finishReason(r.metadata.stopReason),
          completionTokens: tokens,
        };
      } catch (err) {
        if (abort.signal.aborted) return { text: pieces.join(''), finishReason: 'abort', completionTokens: tokens };
        const why = err instanceof Error ? err.message : String(err);
        this.opts.log?.warn(`chat: local LLM failed: ${why}`);
        throw new ApiError('llm_bad_gateway', `The local LLM failed to generate a reply: ${why}`);
      } finally {
        opts.signal?.removeEventListener('abort', onOuter);
        ended = true;
        release();
        wake();
      }
    })();
    result.catch((err) => {
      failure = err;
    });

    async function* gen(): AsyncGenerator<string, void, undefined> {
      try {
        for (;;) {
          if (pieces.length) {
            yield pieces.shift()!;
            continue;
          }
          if (ended) break;
          await new Promise<void>((r) => {
            notify = r;
          });
        }
        await result.catch(() => {});
        if (failure) throw failure;
      } finally {
        // A consumer that stops early stops the generation (and so frees the slot).
        if (!ended) abort.abort(new Error('the reply was cancelled'));
      }
    }
    const it = gen();
    return {
      [Symbol.asyncIterator]: () => it,
      result,
      cancel: () => {
        if (!ended) abort.abort(new Error('the reply was cancelled'));
        void it.return(undefined);
      },
    };
  }

  /** Frees the model; requests still queued or running are stopped. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.chat.dispose?.();
    await this.context.dispose().catch(() => {});
    await this.loaded.dispose().catch(() => {});
    await this.llama.dispose().catch(() => {});
  }
}
