/**
 * Keeps the in-browser engine's trained models at the server's version, apart from any frame: a check on its
 * own timer (and when the page comes back into view) asks `GET /api/models/trained` with If-None-Match, which
 * answers 304 until a training changes the models; only then are the files downloaded and installed.
 * Offline, the service worker answers with the last list it saw, so a kiosk keeps its models.
 */
import { downloadModels, parseModelIndex, TRAINED_MODELS_URL } from './models';
import type { ModelTexts } from './protocol';

export interface ModelSyncOptions {
  /** Installs the models in the engine. */
  install(models: ModelTexts): Promise<unknown>;
  /** Told every new version (null: nothing trained; `local-…`: trained in this browser). */
  onVersion?(version: string | null): void;
  fetch?: (input: string, init?: RequestInit) => Promise<Response>;
  indexUrl?: string;
  /** What relative model URLs resolve against (the page's address). */
  base: string;
}

export class ModelSync {
  /** The version installed; undefined until the first check succeeded. */
  private loaded: string | null | undefined;
  /**
   * Set while a model trained in this browser is installed: the server version it replaced. The server's model
   * (or the service worker's offline copy of it) at that same version must not overwrite it; a new training
   * on the server does.
   */
  private localOver: { base: string | null | undefined } | null = null;
  private checking: Promise<void> | null = null;
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(private readonly options: ModelSyncOptions) {}

  get version(): string | null | undefined {
    return this.loaded;
  }

  /** Resolves once some models (or "none trained") are installed; rejects with why when the first check fails. */
  async ensureLoaded(): Promise<void> {
    if (this.loaded === undefined) await this.check();
  }

  /** One check now (joined with one in progress). Rejects only while nothing was ever installed. */
  check(): Promise<void> {
    this.checking ??= this.run()
      .catch((err: unknown) => {
        // Unreachable with models installed: keep recognising with them.
        if (this.loaded === undefined) throw err;
      })
      .finally(() => {
        this.checking = null;
      });
    return this.checking;
  }

  /** Checks every `intervalMs` while `wanted()` says so (the page is visible); stop() ends it. */
  start(intervalMs: number, wanted: () => boolean = () => true): void {
    this.stop();
    this.timer = setInterval(() => {
      if (wanted()) void this.check().catch(() => undefined);
    }, intervalMs);
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** A model trained in this browser was installed: it stays until the server's models change. */
  installedLocally(): void {
    this.localOver = { base: this.loaded };
    this.loaded = `local-${Date.now()}`;
    this.options.onVersion?.(this.loaded);
  }

  private async run(): Promise<void> {
    const fetchFn = this.options.fetch ?? fetch;
    const indexUrl = this.options.indexUrl ?? TRAINED_MODELS_URL;
    // The version the server must still be at for nothing to change.
    const current = this.localOver ? this.localOver.base : this.loaded;
    const headers: Record<string, string> = typeof current === 'string' ? { 'if-none-match': `"${current}"` } : {};
    let res: Response;
    try {
      res = await fetchFn(indexUrl, { cache: 'no-store', headers });
    } catch {
      throw new Error('cannot reach the server to check the trained models');
    }
    if (res.status === 304) return;
    if (!res.ok) throw new Error(`the server answered ${res.status} for the trained models`);
    const index = parseModelIndex(await res.text(), indexUrl);
    // Answers without If-None-Match (the service worker's offline copy) can still be the same version.
    if (this.localOver ? index.version === this.localOver.base : index.version === this.loaded) return;
    const { version, ...texts } = await downloadModels(index, indexUrl, this.options.base, fetchFn);
    await this.options.install(texts);
    this.loaded = version;
    this.localOver = null;
    this.options.onVersion?.(version);
  }
}
