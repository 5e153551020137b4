/**
 * The one source of the in-browser engine's trained models, apart from any frame: a check on its own timer
 * (and when the page comes back into view) asks `GET /api/models/trained` with If-None-Match, which answers
 * 304 until a training changes the models; only then are the files downloaded and installed. Offline, the
 * service worker answers with the last list it saw, so a kiosk keeps its models.
 *
 * A model trained in this browser (offline) is kept on the device (pwa/local-model.ts) and read at every
 * check, so it survives a reload and every tab installs it. It stays until the server has a model that
 * replaces it (replacesLocal): one trained after it, or one that knows all its people.
 *
 * The corrections ("not this person") come with the server's models: the list's version changes with them, and when
 * only they changed (`models_version` is the files' version, unchanged) only they are downloaded and installed. A
 * model trained in this browser keeps the server's corrections the engine has (they are by name).
 */
import type { TrainedModelsResponse } from '../../../shared/api/index';
import type { LocalModel, LocalModelStore } from '../pwa/local-model';
import { downloadCorrections, downloadModels, parseModelIndex, TRAINED_MODELS_URL } from './models';
import type { ModelTexts } from './protocol';
import type { CompactModelManifest } from '../../../shared/api/compact-models';
import { type CompactDownload, downloadCompact, fetchManifest, memorySegments, type SegmentStore } from './compact-sync';

/**
 * The server refused the trained models to this account (401/403): they hold everyone's templates and are for
 * kiosks and devices (role `biometric-device`) and administrators. The page then recognises on the server.
 */
export class ModelsRefusedError extends Error {
  constructor(
    readonly status: number,
    serverSays: string,
  ) {
    super(
      `this account may not download the trained models (they need the role biometric-device${serverSays ? `: ${serverSays}` : ''}), so faces are recognised on the server`,
    );
    this.name = 'ModelsRefusedError';
  }
}

export interface ModelSyncOptions {
  /** Installs the models in the engine. */
  install(models: ModelTexts): Promise<unknown>;
  /** Told every new version (null: nothing trained; `local-…`: trained in this browser). */
  onVersion?(version: string | null): void;
  /** Told which model trained in this browser is in use (null: the server's). */
  onLocal?(model: LocalModel | null): void;
  /** Told when the server refuses the models to this account (the error), and when it gives them again (null). */
  onRefused?(refusal: ModelsRefusedError | null): void;
  /** Where a model trained in this browser is kept; without it such a model lasts until the next check. */
  local?: LocalModelStore;
  fetch?: (input: string, init?: RequestInit) => Promise<Response>;
  indexUrl?: string;
  /** What relative model URLs resolve against (the page's address). */
  base: string;
  /** Where the compact model's segments are kept (default: in memory; the page passes browserSegments()). */
  segments?: SegmentStore;
  /** Told what each download of the server's models cost. */
  onDownload?(download: ModelDownload): void;
}

/** What one download of the server's models fetched: the compact segments (#27) or the whole files. */
export interface ModelDownload {
  via: 'compact' | 'files';
  /** Segments fetched now / in the model (0 for files). */
  fetched: number;
  segments: number;
  /** Bytes fetched now (uncompressed) and the size of the model installed. */
  fetchedBytes: number;
  installedBytes: number;
}

/** A model trained in this browser, as the engine gave it back. */
export type LocalTraining = Pick<LocalModel, 'labels' | 'lbphYaml' | 'embeddingsJson'>;

/**
 * Whether the server's model replaces the one trained in this browser: never the version it was trained over
 * (nor "nothing trained"); otherwise one trained after it, or one that knows every person it knows (the
 * queued photos reached the server and it trained, whatever the two clocks say).
 */
export function replacesLocal(index: Pick<TrainedModelsResponse, 'version' | 'trained_at' | 'labels'>, local: LocalModel): boolean {
  if (index.version === null || index.version === local.over) return false;
  const labels = new Set(index.labels ?? []);
  if (local.labels.every((l) => labels.has(l))) return true;
  return typeof index.trained_at === 'string' && Date.parse(index.trained_at) > Date.parse(local.trainedAt);
}

export class ModelSync {
  /** The version installed (a server version, null, or a local model's id); undefined until something is. */
  private installed: string | null | undefined;
  /** The version of the server's model files in the engine (a list's `models_version`); undefined: none of the server's. */
  private installedFiles: string | null | undefined;
  /** The server's last list of models (or the service worker's copy of it). */
  private index: TrainedModelsResponse | null = null;
  private localInUse: LocalModel | null = null;
  private checking: Promise<void> | null = null;
  /** Checks and local trainings run one after the other: a check never lands between a training and its keeping. */
  private chain: Promise<unknown> = Promise.resolve();
  private timer: ReturnType<typeof setInterval> | null = null;
  /** The compact model's segments kept on this device (#27). */
  private readonly segments: SegmentStore;
  /** What the last download of the server's models fetched (null: none yet). */
  lastDownload: ModelDownload | null = null;

  constructor(private readonly options: ModelSyncOptions) {
    this.segments = options.segments ?? memorySegments();
  }

  get version(): string | null | undefined {
    return this.installed;
  }

  /** Resolves once some models (or "none trained") are installed; rejects with why when the first check fails. */
  async ensureLoaded(): Promise<void> {
    if (this.installed === undefined) await this.check();
  }

  /** One check now (joined with one in progress). Rejects only while nothing was ever installed. */
  check(): Promise<void> {
    this.checking ??= this.serial(() => this.run())
      .catch((err: unknown) => {
        // Unreachable with models installed: keep recognising with them.
        if (this.installed === undefined) throw err;
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

  /**
   * Runs a training in this browser (which installs its model in the engine) with no check in between, then
   * keeps the model it gives (null: nothing learnt) on the device, over the server version known now.
   * Resolves once it is kept; a failure to keep it is thrown after the model is in use for this page.
   */
  trainLocally<T>(train: () => Promise<{ result: T; model: LocalTraining | null }>): Promise<T> {
    return this.serial(async () => {
      const { result, model } = await train();
      if (!model) return result;
      const trainedAt = new Date();
      const local: LocalModel = {
        ...model,
        id: `local-${trainedAt.getTime()}`,
        trainedAt: trainedAt.toISOString(),
        ...(this.index ? { over: this.index.version } : {}),
      };
      this.use(local);
      await this.options.local?.put(local);
      return result;
    });
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.chain.then(fn, fn);
    this.chain = run.catch(() => undefined);
    return run;
  }

  private use(local: LocalModel | null): void {
    // The engine holds this browser's model now: the server's files are downloaded again when they replace it.
    if (local) this.installedFiles = undefined;
    if (local && this.installed !== local.id) {
      this.installed = local.id;
      this.options.onVersion?.(local.id);
    }
    if (local?.id !== this.localInUse?.id) this.options.onLocal?.(local);
    this.localInUse = local;
  }

  private async run(): Promise<void> {
    const local = (await this.options.local?.get().catch(() => null)) ?? null;
    const { index, problem } = await this.fetchIndex();
    if (local && !(index && replacesLocal(index, local))) {
      if (this.installed !== local.id) {
        await this.options.install({
          lbphYaml: local.lbphYaml,
          // No embedding model trained with it: the engine keeps the one it has.
          ...(local.embeddingsJson !== null ? { embeddingsJson: local.embeddingsJson } : {}),
        });
      }
      this.use(local);
      return;
    }
    if (local) await this.options.local?.clear(local.id).catch(() => undefined);
    if (!index) throw problem;
    if (index.version === this.installed) {
      this.use(null);
      return;
    }
    const indexUrl = this.options.indexUrl ?? TRAINED_MODELS_URL;
    const fetchFn = this.options.fetch ?? fetch;
    // A server before corrections has no models_version: its version is the files'.
    const filesVersion = index.models_version ?? index.version;
    if (this.installedFiles !== undefined && filesVersion === this.installedFiles) {
      // Only the corrections changed: the model files stay.
      await this.options.install({ corrections: await downloadCorrections(index, indexUrl, this.options.base, fetchFn) });
    } else {
      // Unknown until installed: a failed install downloads the files again at the next check.
      this.installedFiles = undefined;
      const compact = await this.installCompact(index, indexUrl, fetchFn);
      if (compact) {
        this.installedFiles = compact.models_version;
        this.installed = compact.version;
        this.options.onVersion?.(compact.version);
        this.use(null);
        return;
      }
      const { version: _v, ...texts } = await downloadModels(index, indexUrl, this.options.base, fetchFn);
      await this.options.install(texts);
      this.installedFiles = filesVersion;
      const bytes = (index.lbph?.bytes ?? 0) + (index.embedding?.bytes ?? 0);
      this.report({ via: 'files', fetched: 0, segments: 0, fetchedBytes: bytes, installedBytes: bytes });
    }
    this.installed = index.version;
    this.options.onVersion?.(index.version);
    this.use(null);
  }

  /**
   * #27: the compact models, fetching only the segments this device lacks, installed with their corrections; null
   * when the server has none (an older server) or they could not be had, so the files are downloaded instead.
   */
  private async installCompact(
    index: TrainedModelsResponse,
    indexUrl: string,
    fetchFn: (input: string, init?: RequestInit) => Promise<Response>,
  ): Promise<{ version: string; models_version: string } | null> {
    const manifestUrl = new URL(`${indexUrl}/compact`, this.options.base).href;
    let download: CompactDownload;
    let manifest: CompactModelManifest | null;
    try {
      manifest = await fetchManifest(manifestUrl, fetchFn);
      if (!manifest) return null;
      download = await downloadCompact(manifest, manifestUrl, this.segments, fetchFn);
    } catch {
      return null;
    }
    // The corrections of the manifest's version (a training between the list and the manifest: the manifest's).
    const corrections = await downloadCorrections({ ...index, corrections: manifest.corrections }, indexUrl, this.options.base, fetchFn);
    await this.options.install({ compact: download.models, corrections });
    const { fetched, segments, fetchedBytes, installedBytes } = download;
    this.report({ via: 'compact', fetched, segments, fetchedBytes, installedBytes });
    return { version: manifest.version, models_version: manifest.models_version };
  }

  private report(download: ModelDownload): void {
    this.lastDownload = download;
    this.options.onDownload?.(download);
  }

  /** The server's list now (the last one on a 304), or why there is none. */
  private async fetchIndex(): Promise<{ index: TrainedModelsResponse | null; problem?: Error }> {
    const fetchFn = this.options.fetch ?? fetch;
    const indexUrl = this.options.indexUrl ?? TRAINED_MODELS_URL;
    const known = this.index?.version;
    const headers: Record<string, string> = typeof known === 'string' ? { 'if-none-match': `"${known}"` } : {};
    let res: Response;
    try {
      res = await fetchFn(indexUrl, { cache: 'no-store', headers });
    } catch {
      return { index: null, problem: new Error('cannot reach the server to check the trained models') };
    }
    if (res.status === 304 && this.index) return { index: this.index };
    if (res.status === 401 || res.status === 403) {
      const body = (await res.json().catch(() => null)) as { error?: { message?: unknown } } | null;
      const refusal = new ModelsRefusedError(res.status, typeof body?.error?.message === 'string' ? body.error.message : '');
      this.options.onRefused?.(refusal);
      return { index: null, problem: refusal };
    }
    if (!res.ok) return { index: null, problem: new Error(`the server answered ${res.status} for the trained models`) };
    this.options.onRefused?.(null);
    this.index = parseModelIndex(await res.text(), indexUrl);
    return { index: this.index };
  }
}
