/**
 * What is chosen at run time through the API, kept in DATA_DIR so that it survives a restart: the active
 * recognizer (PUT /api/models/config), the detection method (PUT /api/models/detection) and each recognizer's
 * threshold overrides (PUT /api/models/thresholds). One small JSON file, `<DATA_DIR>/settings/runtime.json`.
 *
 * - The settings (environment) give the starting defaults; a saved choice wins over them after a restart. A
 *   threshold override goes over the recognizer's default rule (calibrated default + LBPH_DISTANCE_* /
 *   EMBEDDING_DISTANCE_MAX: server/engines/faces/decision-rules.ts). The embedding recognizer's overrides are
 *   kept per descriptor model: each model has its own distance scale, so a limit set for one means nothing for
 *   another (switching back finds them again).
 * - Writes are read-modify-write under a lock file every API replica on DATA_DIR shares (file-lock.ts), then an
 *   atomic temp + rename: two changes at once, on one replica or two, both land, and a reader never sees half a
 *   file.
 * - Replicas follow each other: a stat of the file (inode, size, mtime) every `watch` interval and before every
 *   read of the API; a new signature is read again and the changed choices applied (`onChange`).
 * - A file that cannot be read back (bad JSON, wrong shape, a symbolic link) is set aside as
 *   `runtime.json.corrupt-<time>` with a warning, and the defaults apply: never a crash, never lost silently.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import {
  DETECTION_METHODS,
  RECOGNITION_MODELS,
  THRESHOLD_KEYS,
  type DetectionMethod,
  type RecognitionModel,
  type ThresholdKey,
} from '../../shared/api/index.js';
import type { DecisionRule } from '../../shared/recognition/decision.js';
import { DEFAULT_DESCRIPTOR_MODEL, type LimitBound, limitBound, ruleWithOverrides } from '../../shared/recognition/rules.js';
import { ApiError } from '../http/errors.js';
import type { Logger } from '../logger.js';
import { removeStaleTemps, writeFileAtomic } from '../storage/atomic.js';
import { type HeldLock, LockBusyError } from '../storage/file-lock.js';
import { readFileAndStatNoFollow } from '../storage/no-follow.js';
import { privateDir } from '../storage/private-modes.js';
import { type ClusterLock, LocalFiles, type SharedFiles, StateUnavailableError } from '../storage/shared-files.js';
import { wroteOrUndo } from '../storage/store-hooks.js';

export const RUNTIME_DIR = 'settings';
export const RUNTIME_FILE = 'runtime.json';
export const RUNTIME_LOCK_FILE = '.runtime.lock';
const FORMAT = 'lookout-runtime-settings';
const VERSION = 1;

export type ThresholdOverrides = Partial<Record<ThresholdKey, number>>;
/** A change: a number sets a key, null resets it to the default, absent leaves it. */
export type ThresholdPatch = Partial<Record<ThresholdKey, number | null>>;

const RULE_KEY: Record<ThresholdKey, 'max' | 'sureMax' | 'ratioMax' | 'verifyMax' | 'cohortRatio'> = {
  max: 'max',
  sure_max: 'sureMax',
  ratio_max: 'ratioMax',
  verify_max: 'verifyMax',
  cohort_ratio: 'cohortRatio',
};
/** The rule's own key names as the API spells them (for messages). */
const API_NAME: Record<keyof DecisionRule, string> = {
  min: 'min',
  max: 'max',
  sureMax: 'sure_max',
  nearMax: 'near_max',
  ratioMax: 'ratio_max',
  verifyMax: 'verify_max',
  cohortRatio: 'cohort_ratio',
  quality: 'quality',
  scale: 'scale',
};

const overridesSchema = z
  .object({
    max: z.number().optional(),
    sure_max: z.number().optional(),
    ratio_max: z.number().optional(),
    verify_max: z.number().optional(),
    cohort_ratio: z.number().optional(),
  })
  .strict();

const fileSchema = z
  .object({
    format: z.literal(FORMAT),
    version: z.literal(VERSION),
    recognition_model: z.enum(RECOGNITION_MODELS).optional(),
    detection_method: z.enum(DETECTION_METHODS).optional(),
    thresholds: z.record(z.string(), overridesSchema).default({}),
    updated_at: z.string().optional(),
  })
  .loose();

export type RuntimeFile = z.infer<typeof fileSchema>;

const EMPTY: RuntimeFile = Object.freeze({ format: FORMAT, version: VERSION, thresholds: {} }) as RuntimeFile;

/** The saved choices (absent: not chosen, the settings apply). */
export interface SavedChoices {
  recognition_model?: RecognitionModel;
  detection_method?: DetectionMethod;
}

export interface RuntimeStoreOptions {
  /** DATA_DIR (the file lives in `<dataDir>/settings/`). */
  dataDir: string;
  /** The rule a recognizer starts from before the site's overrides (calibrated default + settings). */
  defaultRule(recognizer: RecognitionModel, descriptorModel: string): DecisionRule;
  /** The embedding recognizer's descriptor model now (its overrides are kept per model). */
  descriptorModel(): string;
  log: Logger;
  /** #37: told of every file written or set aside here, and the source of the lock every replica shares (DATA_DIR's own files when not given). */
  shared?: SharedFiles;
  /** How long a change waits for another replica's change to finish (default 10 s). */
  lockTimeoutMs?: number;
  now?: () => Date;
  /** #35 THRESHOLD_BOUNDS: false lets a limit go over the whole distance range (default true: calibrated bounds). */
  calibratedBounds?: boolean;
}

/** Where a recognizer's overrides are kept in the file. */
function thresholdsKey(recognizer: RecognitionModel, descriptorModel: string): string {
  return recognizer === 'embedding' ? `embedding:${descriptorModel}` : recognizer;
}

function errCode(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException)?.code;
}

/** The overrides in the rule's own terms (what ruleWithOverrides takes). */
function ruleOverrides(overrides: ThresholdOverrides): Partial<DecisionRule> {
  const out: Partial<Record<keyof DecisionRule, number>> = {};
  for (const key of THRESHOLD_KEYS) {
    const v = overrides[key];
    if (v !== undefined) out[RULE_KEY[key]] = v;
  }
  return out as Partial<DecisionRule>;
}

/** A rule problem (ruleProblem's text) with the API's key names. */
function apiWords(problem: string): string {
  return problem.replace(/\b(sureMax|nearMax|ratioMax|verifyMax|cohortRatio)\b/g, (k) => API_NAME[k as keyof DecisionRule]);
}

/**
 * The overrides after `patch`, and the rule they make over `defaults`; or the first problem, in words that name
 * the key. A key set to its default's value is still an override (the default may change later). #35: a limit
 * past the calibrated bound of the recognizer and descriptor model (shared/recognition/rules.ts limitBound) is
 * refused, saved earlier or sent now.
 */
export function applyThresholdPatch(
  recognizer: RecognitionModel,
  defaults: DecisionRule,
  current: ThresholdOverrides,
  patch: ThresholdPatch,
  descriptorModel: string = DEFAULT_DESCRIPTOR_MODEL,
  limits: LimitBound = limitBound(recognizer, descriptorModel),
): { overrides: ThresholdOverrides; rule: DecisionRule } | { problem: string } {
  const overrides: ThresholdOverrides = { ...current };
  const { max: bound, basis } = limits;
  const scale = recognizer === 'embedding' ? `embedding (${descriptorModel})` : recognizer;
  for (const key of THRESHOLD_KEYS) {
    const v = patch[key];
    if (v === undefined) continue;
    if (v === null) {
      delete overrides[key];
      continue;
    }
    if (!Number.isFinite(v)) return { problem: `${key} must be a finite number` };
    if (key === 'ratio_max') {
      if (!(v > 0 && v <= 1)) return { problem: `ratio_max must be above 0 and at most 1 (1 switches the margin rule off), got ${v}` };
    } else if (key === 'cohort_ratio') {
      if (recognizer !== 'embedding')
        return { problem: 'cohort_ratio is for the embedding recognizer only (LBPH has no background cohort)' };
      if (!(v > 0 && v <= 1.5)) return { problem: `cohort_ratio must be above 0 and at most 1.5, got ${v}` };
    }
    overrides[key] = v;
  }
  // The distances, saved or sent: a limit past the calibrated bound names strangers as enrolled people.
  for (const key of ['max', 'sure_max', 'verify_max'] as const) {
    const v = overrides[key];
    if (v === undefined || (v > defaults.min && v <= bound)) continue;
    const saved = patch[key] === undefined ? ' (saved earlier; send null to reset it)' : '';
    return { problem: `${key} must be above ${defaults.min} and at most ${bound} for ${scale}, got ${v}${saved}; the bound: ${basis}` };
  }
  // Saved or sent, an explicit sure bound above the limit is refused rather than moved: the caller meant something.
  // #36: verify_max is not the limit's: 1:1 verification is its own decision (within the bound above), and a new
  // limit leaves it as it was (it once dragged it down unasked, 75 -> 45).
  const max = overrides.max ?? defaults.max;
  for (const key of ['sure_max'] as const) {
    const v = overrides[key];
    if (v !== undefined && v > max) {
      const saved = patch[key] === undefined ? ' (saved earlier; send null to reset it)' : '';
      return { problem: `${key} (${v})${saved} must not be above max (${max})` };
    }
  }
  try {
    return { overrides, rule: ruleWithOverrides(defaults, ruleOverrides(overrides)) };
  } catch (err) {
    return { problem: apiWords(err instanceof Error ? err.message : String(err)) };
  }
}

export class RuntimeStore {
  readonly dir: string;
  readonly file: string;
  private readonly lock: ClusterLock;
  private readonly shared: SharedFiles;
  private state: RuntimeFile = EMPTY;
  /** Stat signature of the file as last read or written (`-` when there is none). */
  private signature = '';
  private readonly rules = new Map<string, { rule: DecisionRule; problem: string | null }>();
  private readonly listeners: ((now: SavedChoices, before: SavedChoices) => void)[] = [];
  private watcher: NodeJS.Timeout | null = null;
  private refreshing: Promise<void> | null = null;
  private readonly now: () => Date;

  constructor(private readonly opts: RuntimeStoreOptions) {
    this.dir = path.join(opts.dataDir, RUNTIME_DIR);
    this.file = path.join(this.dir, RUNTIME_FILE);
    this.shared = opts.shared ?? new LocalFiles(opts.dataDir);
    this.lock = this.shared.lock(path.join(this.dir, RUNTIME_LOCK_FILE), { staleMs: 10_000 });
    this.now = opts.now ?? (() => new Date());
  }

  async init(): Promise<void> {
    await privateDir(this.dir);
    try {
      // Temporary files are only written holding the lock: any found while holding it were left by a crash.
      await this.lock.run(async () => {
        await removeStaleTemps(this.dir);
        await this.reload(true);
      }, this.opts.lockTimeoutMs ?? 10_000);
    } catch (err) {
      if (!(err instanceof LockBusyError) && !(err instanceof StateUnavailableError)) throw err;
      // Another replica is writing for that long (or PostgreSQL is away since the start): read what is there, it is
      // complete (atomic rename).
      await this.reload(false);
    }
  }

  /** The saved choices (absent keys were never chosen: the settings apply). */
  get saved(): SavedChoices {
    const { recognition_model, detection_method } = this.state;
    return { ...(recognition_model ? { recognition_model } : {}), ...(detection_method ? { detection_method } : {}) };
  }

  /** When the file was last written (by any replica), or null when nothing was saved. */
  get updatedAt(): string | null {
    return this.state.updated_at ?? null;
  }

  /** Called when the saved choices changed (another replica's change read, or a change here), with now and before. */
  onChange(listener: (now: SavedChoices, before: SavedChoices) => void): void {
    this.listeners.push(listener);
  }

  /** The rule a recognizer answers with now: its default with the site's overrides (FaceService's `rules`). */
  ruleFor(recognizer: RecognitionModel): DecisionRule {
    return this.resolved(recognizer).rule;
  }

  /** Why the saved overrides of a recognizer are not in use (they no longer fit its default), or null. */
  problemFor(recognizer: RecognitionModel): string | null {
    return this.resolved(recognizer).problem;
  }

  defaultsFor(recognizer: RecognitionModel): DecisionRule {
    return this.opts.defaultRule(recognizer, this.opts.descriptorModel());
  }

  overridesFor(recognizer: RecognitionModel): ThresholdOverrides {
    return { ...(this.state.thresholds[thresholdsKey(recognizer, this.opts.descriptorModel())] ?? {}) };
  }

  descriptorModel(): string {
    return this.opts.descriptorModel();
  }

  /** #35: the loosest limit a change may set for a recognizer now (its descriptor model's calibrated bound). */
  boundFor(recognizer: RecognitionModel): LimitBound {
    return limitBound(recognizer, this.opts.descriptorModel(), this.opts.calibratedBounds ?? true);
  }

  /** The rule `patch` would make, saving nothing; throws a 400 ApiError naming the problem. */
  propose(recognizer: RecognitionModel, patch: ThresholdPatch): DecisionRule {
    const out = applyThresholdPatch(
      recognizer,
      this.defaultsFor(recognizer),
      this.overridesFor(recognizer),
      patch,
      this.descriptorModel(),
      this.boundFor(recognizer),
    );
    if ('problem' in out) throw new ApiError('bad_request', out.problem);
    return out.rule;
  }

  /** Saves threshold overrides (null resets a key); a 400 ApiError when the result is not a usable rule. */
  async setThresholds(recognizer: RecognitionModel, patch: ThresholdPatch): Promise<DecisionRule> {
    const descriptorModel = this.opts.descriptorModel();
    const key = thresholdsKey(recognizer, descriptorModel);
    let rule: DecisionRule | undefined;
    await this.change((file) => {
      const defaults = this.opts.defaultRule(recognizer, descriptorModel);
      const out = applyThresholdPatch(recognizer, defaults, file.thresholds[key] ?? {}, patch, descriptorModel, this.boundFor(recognizer));
      if ('problem' in out) throw new ApiError('bad_request', out.problem);
      rule = out.rule;
      const thresholds = { ...file.thresholds };
      if (Object.keys(out.overrides).length) thresholds[key] = out.overrides;
      else delete thresholds[key];
      return { ...file, thresholds };
    });
    return rule as DecisionRule;
  }

  /** Saves the chosen recognizer and/or detection method. */
  async setChoices(choices: SavedChoices): Promise<void> {
    await this.change((file) => ({ ...file, ...choices }));
  }

  /** Reads the file again when it changed on disk (another replica wrote it); cheap when it did not (a stat). */
  async refresh(): Promise<void> {
    // One refresh at a time; callers arriving meanwhile wait for it (it reads what they would).
    this.refreshing ??= (async () => {
      try {
        if ((await this.stat()) !== this.signature) await this.reloadLocked();
      } finally {
        this.refreshing = null;
      }
    })();
    return this.refreshing;
  }

  /** Follows changes made by other replicas every `intervalMs`. */
  watch(intervalMs: number): void {
    this.stopWatching();
    this.watcher = setInterval(() => {
      this.refresh().catch((err) => this.opts.log.warn(`checking ${RUNTIME_FILE} for changes failed: ${String(err)}`));
    }, intervalMs);
    this.watcher.unref();
  }

  stopWatching(): void {
    if (this.watcher) clearInterval(this.watcher);
    this.watcher = null;
  }

  private resolved(recognizer: RecognitionModel): { rule: DecisionRule; problem: string | null } {
    const descriptorModel = this.opts.descriptorModel();
    const key = thresholdsKey(recognizer, descriptorModel);
    const cached = this.rules.get(key);
    if (cached) return cached;
    const defaults = this.opts.defaultRule(recognizer, descriptorModel);
    const overrides = this.state.thresholds[key] ?? {};
    let out: { rule: DecisionRule; problem: string | null };
    const applied = applyThresholdPatch(recognizer, defaults, {}, overrides, descriptorModel, this.boundFor(recognizer));
    if ('problem' in applied) {
      // The defaults moved under saved overrides (other settings): answer with the defaults and say so once.
      const problem = `the saved thresholds of ${recognizer} do not fit its defaults (${applied.problem}); the defaults apply until they are set again`;
      this.opts.log.warn(problem);
      out = { rule: defaults, problem };
    } else {
      out = { rule: applied.rule, problem: null };
    }
    this.rules.set(key, out);
    return out;
  }

  /** Read-modify-write of the file under the shared lock; memory follows what was written. */
  private async change(edit: (file: RuntimeFile) => RuntimeFile): Promise<void> {
    let lock: HeldLock;
    try {
      lock = await this.lock.acquireWithin(this.opts.lockTimeoutMs ?? 10_000);
    } catch (err) {
      if (err instanceof LockBusyError)
        throw new ApiError('server_busy', 'another change of the runtime settings is still being saved; try again');
      throw err;
    }
    try {
      // What another replica saved counts: the edit applies to the file as it is now.
      await this.reload(true);
      const next: RuntimeFile = { ...edit(this.state), format: FORMAT, version: VERSION, updated_at: this.now().toISOString() };
      const before = await fs.readFile(this.file).catch(() => null);
      await writeFileAtomic(this.file, `${JSON.stringify(next, null, 2)}\n`);
      // A change that cannot be shared is not made (503): the file as it was, and memory unchanged.
      await wroteOrUndo(this.shared, this.file, () => (before ? writeFileAtomic(this.file, before) : fs.rm(this.file, { force: true })));
      this.install(next, await this.stat());
    } finally {
      await lock.release();
    }
  }

  /** Reload holding the lock (a corrupt file is only set aside by one who holds it); without it when busy. */
  private async reloadLocked(): Promise<void> {
    let lock: HeldLock | null = null;
    try {
      lock = await this.lock.acquire();
    } catch (err) {
      if (!(err instanceof LockBusyError)) throw err;
      // Another replica is writing: what is there now is complete (atomic rename), so read it; only a file that
      // cannot be read back waits for the lock to be set aside.
      return this.reload(false);
    }
    try {
      await this.reload(true);
    } finally {
      await lock.release();
    }
  }

  /**
   * Replaces the memory with the file (the defaults when there is none). `locked`: this process holds the lock,
   * so a file that cannot be read back is set aside; without the lock it is only ignored for now.
   */
  private async reload(locked: boolean): Promise<void> {
    let text: string;
    let signature: string;
    try {
      const { bytes, stat } = await readFileAndStatNoFollow(this.file);
      text = bytes.toString('utf8');
      signature = `${stat.ino}:${stat.size}:${stat.mtimeMs}`;
    } catch (err) {
      const code = errCode(err);
      if (code === 'ENOENT') return this.install(EMPTY, '-');
      if (code !== 'ELOOP' && code !== 'ENOTFILE') throw err;
      return this.corrupt(locked, 'it is not a regular file');
    }
    let parsed: RuntimeFile;
    try {
      const result = fileSchema.safeParse(JSON.parse(text));
      if (!result.success) {
        const issue = result.error.issues[0];
        return this.corrupt(locked, `${issue.path.join('.') || 'the file'}: ${issue.message}`);
      }
      parsed = result.data;
    } catch (err) {
      return this.corrupt(locked, err instanceof Error ? err.message : String(err));
    }
    this.install(parsed, signature);
  }

  private async corrupt(locked: boolean, why: string): Promise<void> {
    if (!locked) {
      this.opts.log.warn(`${this.file} could not be read (${why}); the settings' defaults apply for now`);
      return this.install(EMPTY, this.signature);
    }
    const aside = `${this.file}.corrupt-${this.now().toISOString().replace(/[:.]/g, '-')}`;
    const moved = await fs.rename(this.file, aside).then(
      () => true,
      (err) => {
        if (errCode(err) !== 'ENOENT') throw err;
        return false;
      },
    );
    if (moved) await this.shared.moved(this.file, aside);
    this.opts.log.warn(
      `${RUNTIME_FILE} could not be read (${why}); set aside as ${path.basename(aside)}: the recognizer, detection method and thresholds start from the settings' defaults`,
    );
    this.install(EMPTY, await this.stat());
  }

  private install(next: RuntimeFile, signature: string): void {
    const before = this.saved;
    this.state = next;
    this.signature = signature;
    this.rules.clear();
    const now = this.saved;
    if (now.recognition_model !== before.recognition_model || now.detection_method !== before.detection_method) {
      for (const listener of this.listeners) {
        try {
          listener(now, before);
        } catch (err) {
          this.opts.log.warn(`applying the saved runtime settings failed: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
    }
  }

  private async stat(): Promise<string> {
    try {
      const st = await fs.lstat(this.file);
      return `${st.ino}:${st.size}:${st.mtimeMs}`;
    } catch {
      return '-';
    }
  }
}
