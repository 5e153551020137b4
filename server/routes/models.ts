/**
 * Model configuration: which recognizer and which detection engine are active, what is available and why not, and
 * each recognizer's decision thresholds (with a preview of a change before it is saved). Changes apply to the next
 * request at once, with no restart, and are kept in DATA_DIR (server/config/runtime-store.ts) so they survive one;
 * a request already running keeps what it started with.
 */
import type { Cohort } from '../../shared/recognition/cohort.js';
import { Hono } from 'hono';
import type { z } from 'zod';
import {
  DETECTION_METHODS,
  RECOGNITION_MODELS,
  THRESHOLD_KEYS,
  type RecognitionModel,
  type RecognizerThresholds,
  type ThresholdsPreviewResponse,
  type ThresholdsResponse,
  thresholdValuesOf,
} from '../../shared/api/index.js';
import { scoreOf } from '../../shared/recognition/decision.js';
import { decodeEmbeddingsFile, decodeLbphStream } from '../../shared/recognition/model-files.js';
import {
  type LeaveOneOut,
  leaveOneOutEmbedding,
  leaveOneOutLbph,
  previewEnrolled,
  previewRecent,
} from '../../shared/recognition/threshold-preview.js';
import type { RuntimeStore } from '../config/runtime-store.js';
import { detectionMethodInput, recognitionModelInput } from '../config/settings.js';
import type { AppContext } from '../http/context.js';
import { ApiError } from '../http/errors.js';
import { mountRoute } from '../http/route.js';
import type { TrainedSnapshot } from '../storage/trained-files.js';
import { installedDetection, readTrainedDetection } from '../engines/faces/trained-detection.js';
import { actorText } from '../audit/audit-middleware.js';
import { compatConfig, compatModels, DETECTION_DESCRIPTIONS, ovmsInfo } from './compat.js';

/** Recent recognition results of one recognizer a preview decides again, newest first. */
const RECENT_RECORDS = 500;

// The original clients send `ai_model` (with `dlib`), `method` or `detection_method` (with `opencv`/`openvino`):
// the table's body schemas take any text, and the values are checked here so the message names the choices.

function parseChoice<T>(raw: string | undefined, schema: z.ZodType<T>, field: string, allowed: string): T {
  if (raw === undefined) throw new ApiError('missing_field', `send { "${field}": ${allowed} }`);
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new ApiError('bad_request', `"${raw}" is not a ${field.replace('_', ' ')}; use ${allowed}`);
  return parsed.data;
}

function recognizerThresholds(runtime: RuntimeStore, recognizer: RecognitionModel): RecognizerThresholds {
  const defaults = runtime.defaultsFor(recognizer);
  const overrides = runtime.overridesFor(recognizer);
  const problem = runtime.problemFor(recognizer);
  const rule = runtime.ruleFor(recognizer);
  return {
    ...thresholdValuesOf(rule),
    // #36: each limit in the units of a face's `confidence` (its similarity on this recognizer's scale).
    similarity: {
      max: scoreOf(rule.max, rule),
      sure_max: scoreOf(rule.sureMax, rule),
      verify_max: scoreOf(rule.verifyMax, rule),
      near_max: scoreOf(rule.nearMax, rule),
    },
    defaults: thresholdValuesOf(defaults),
    overridden: problem ? [] : THRESHOLD_KEYS.filter((key) => overrides[key] !== undefined),
    // #35: the calibrated range a limit may be set in (PUT refuses others), so a form need not guess.
    bounds: { min: defaults.min, ...runtime.boundFor(recognizer) },
    ...(recognizer === 'embedding' ? { descriptor_model: runtime.descriptorModel() } : {}),
    ...(problem ? { problem } : {}),
  };
}

function thresholds(runtime: RuntimeStore): ThresholdsResponse {
  return {
    lbph: recognizerThresholds(runtime, 'lbph'),
    embedding: recognizerThresholds(runtime, 'embedding'),
    updated_at: runtime.updatedAt,
  };
}

type Scalar = string | number | boolean | null;

/**
 * #35: a settings change for the audit row and the log line: `old.<key>` and `new.<key>` of each key asked for or
 * changed (a limit moved drags the sure bound along; never verify_max, #36). Values are numbers or names, never a secret.
 */
function changeDetail(before: Record<string, unknown>, after: Record<string, unknown>, asked: string[]): Record<string, Scalar> {
  const scalar = (v: unknown): Scalar => (v === undefined ? null : typeof v === 'object' && v !== null ? JSON.stringify(v) : (v as Scalar));
  const keys = Object.keys(after).filter((k) => asked.includes(k) || scalar(before[k]) !== scalar(after[k]));
  return Object.fromEntries(keys.flatMap((k) => [[`old.${k}`, scalar(before[k])] as const, [`new.${k}`, scalar(after[k])] as const]));
}

/** The changed values in a log line: `max 80 -> 70, sure_max 72 -> 70`. */
function changeText(detail: Record<string, Scalar>): string {
  const keys = Object.keys(detail)
    .filter((k) => k.startsWith('new.'))
    .map((k) => k.slice(4));
  return keys.length
    ? keys.map((k) => `${k} ${String(detail[`old.${k}`])} -> ${String(detail[`new.${k}`])}`).join(', ')
    : 'nothing changed';
}

/** A trained model's leave-one-out rankings and names, or why there are none. */
type Held = { loo: LeaveOneOut; names: Map<number, string> } | { reason: string };

/** Leave-one-out of the installed model of a recognizer (the files this server runs), ranked once per version. */
async function heldOut(recognizer: RecognitionModel, snapshot: TrainedSnapshot, cohort: Cohort | null): Promise<Held> {
  const names = (labelIds: Record<string, number>) => new Map(Object.entries(labelIds).map(([name, id]) => [id, name]));
  const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  if (recognizer === 'lbph') {
    // The model in memory when the snapshot has it; else training.yml in pieces (more text than one string holds).
    const source =
      snapshot.lbphModel ?? (snapshot.lbphFile ? await decodeLbphStream(snapshot.lbphFile.chunks(), snapshot.files.labelMap) : null);
    if (!source) return { reason: 'the lbph recognizer is not trained' };
    const { model, labelIds } = source;
    if (model.labels.length < 2) return { reason: 'the trained model has fewer than 2 samples' };
    return { loo: await leaveOneOutLbph(model), names: names(labelIds) };
  }
  if (!snapshot.files.embedding) return { reason: 'the embedding recognizer is not trained' };
  const { model, labelIds } = decodeEmbeddingsFile(text(snapshot.files.embedding));
  if (model.labels.length < 2) return { reason: 'the trained model has fewer than 2 samples' };
  return { loo: await leaveOneOutEmbedding(model, { cohort }), names: names(labelIds) };
}

export function modelRoutes(ctx: AppContext, runtime: RuntimeStore): Hono {
  const app = new Hono();
  // Another replica on the same DATA_DIR may have changed the saved choices: a stat, and a read when it did. A
  // failed look answers with what is known here (the watch tries again) rather than failing a read.
  const refresh = () => runtime.refresh().catch((err) => ctx.log.warn(`reading the saved runtime settings failed: ${String(err)}`));
  /** Per recognizer: the model version ranked, and its rankings (shared by previews running at once). */
  const rankings = new Map<RecognitionModel, { version: string | null; held: Promise<Held> }>();
  const rankingsOf = (recognizer: RecognitionModel): Promise<Held> => {
    const snapshot = ctx.faces.trainedFiles;
    const cached = rankings.get(recognizer);
    if (cached && cached.version === snapshot.version) return cached.held;
    const held = heldOut(recognizer, snapshot, ctx.faces.cohort);
    rankings.set(recognizer, { version: snapshot.version, held });
    // A failure is not kept: the next preview tries again.
    held.catch(() => rankings.delete(recognizer));
    return held;
  };

  /** #29: which method the installed models were trained with, and whether LBPH must be retrained for the active one. */
  const trainedDetection = async () => {
    const recognizers = ctx.faces.recognizerStatus();
    const trainedWith = installedDetection(await readTrainedDetection(ctx.settings.dataDir), [
      recognizers.lbph.trained_at,
      recognizers.embedding.trained_at,
    ]);
    return {
      trained_detection_method: trainedWith,
      retrain_recommended: recognizers.lbph.trained && trainedWith !== null && trainedWith !== ctx.faces.detectionMethod,
    };
  };

  const config = async () => ({
    recognition_model: ctx.faces.recognitionModel,
    detection_method: ctx.faces.detectionMethod,
    recognizers: ctx.faces.recognizerStatus(),
    ...(await trainedDetection()),
    ...compatConfig(ctx),
  });

  mountRoute(app, 'modelsConfig', async () => {
    await refresh();
    return config();
  });

  mountRoute(app, 'setModelsConfig', async (c, { body }) => {
    const model = parseChoice(
      body.recognition_model ?? body.ai_model ?? body.model,
      recognitionModelInput,
      'recognition_model',
      '"lbph" or "embedding"',
    );
    await refresh();
    const previous = ctx.faces.recognitionModel;
    // #35: audited with the old and new value (a refusal records the value asked for).
    const change = changeDetail({ recognition_model: previous }, { recognition_model: model }, ['recognition_model']);
    c.set('auditDetail', change);
    ctx.faces.setRecognitionModel(model);
    try {
      await runtime.setChoices({ recognition_model: model });
    } catch (err) {
      // Not saved, so not in force either: a restart would silently undo it.
      ctx.faces.setRecognitionModel(previous);
      throw err;
    }
    ctx.log.info(`recognition model saved by ${actorText(c)}: ${changeText(change)}`);
    return { status: 'ok' as const, ...(await config()) };
  });

  mountRoute(app, 'setDetection', async (c, { body }) => {
    const method = parseChoice(body.detection_method ?? body.method, detectionMethodInput, 'detection_method', '"local" or "remote"');
    await refresh();
    const previous = ctx.faces.detectionMethod;
    const change = changeDetail({ detection_method: previous }, { detection_method: method }, ['detection_method']);
    c.set('auditDetail', change);
    ctx.faces.setDetectionMethod(method);
    try {
      await runtime.setChoices({ detection_method: method });
    } catch (err) {
      ctx.faces.setDetectionMethod(previous);
      throw err;
    }
    ctx.log.info(`detection method saved by ${actorText(c)}: ${changeText(change)}`);
    return {
      status: 'ok' as const,
      detection_method: ctx.faces.detectionMethod,
      remote_status: ctx.remote.status,
      ...(await trainedDetection()),
      ovms_info: ovmsInfo(ctx),
    };
  });

  mountRoute(app, 'modelsAvailable', () => {
    const recognizers = ctx.faces.recognizerStatus();
    return {
      recognition_models: RECOGNITION_MODELS.map((name) => {
        const reason = ctx.faces.recognitionUnavailable(name);
        return {
          name,
          available: reason === null,
          ...(reason ? { reason } : {}),
          active: name === ctx.faces.recognitionModel,
          trained: recognizers[name].trained,
        };
      }),
      detection_methods: DETECTION_METHODS.map((name) => {
        const reason = ctx.faces.detectionUnavailable(name);
        return {
          name,
          available: reason === null,
          ...(reason ? { reason } : {}),
          active: name === ctx.faces.detectionMethod,
          ...(name === 'remote' ? { status: ctx.remote.status } : {}),
          type: name,
          description: DETECTION_DESCRIPTIONS[name],
        };
      }),
      models: compatModels(ctx),
    };
  });

  mountRoute(app, 'thresholds', async () => {
    await refresh();
    return thresholds(runtime);
  });

  mountRoute(app, 'setThresholds', async (c, { body }) => {
    const { recognizer, ...patch } = body;
    await refresh();
    // #35: audited with the values before and after (null sent: reset to the default); a refusal records the
    // values asked for as `new.*`.
    const { quality: _q, ...before } = thresholdValuesOf(runtime.ruleFor(recognizer));
    const asked = Object.keys(patch).filter((k) => patch[k as keyof typeof patch] !== undefined);
    const scope: Record<string, Scalar> = recognizer === 'embedding' ? { descriptor_model: runtime.descriptorModel() } : {};
    c.set('auditTarget', recognizer);
    c.set('auditDetail', { ...scope, ...changeDetail(before, { ...before, ...patch }, asked) });
    const rule = await runtime.setThresholds(recognizer, patch);
    const { quality: _q2, ...after } = thresholdValuesOf(rule);
    const change = changeDetail(before, after, asked);
    c.set('auditDetail', { ...scope, ...change });
    ctx.log.info(`thresholds of ${recognizer} saved by ${actorText(c)}: ${changeText(change)}`);
    return thresholds(runtime);
  });

  mountRoute(app, 'previewThresholds', async (_c, { body }): Promise<ThresholdsPreviewResponse> => {
    const { recognizer, ...patch } = body;
    await refresh();
    const current = runtime.ruleFor(recognizer);
    const proposed = runtime.propose(recognizer, patch);
    const descriptorModel = recognizer === 'embedding' ? runtime.descriptorModel() : undefined;

    const held = await rankingsOf(recognizer);
    let enrolled: ThresholdsPreviewResponse['enrolled'];
    if ('reason' in held) {
      const none = { named_right: 0, named_wrong: 0, unsure: 0, unsure_wrong: 0, unknown: 0, unknown_reasons: {} };
      enrolled = {
        available: false,
        reason: held.reason,
        people: 0,
        samples: 0,
        evaluated: 0,
        alone: 0,
        before: none,
        after: none,
        changes: [],
      };
    } else {
      const { loo, names } = held;
      const preview = previewEnrolled(loo, current, proposed, (id) => names.get(id) ?? `#${id}`);
      enrolled = {
        available: true,
        people: loo.people,
        samples: loo.samples,
        evaluated: loo.heldOut.length,
        alone: loo.heldOut.filter((s) => s.alone).length,
        ...preview,
      };
    }

    const all = (await ctx.results.query({ limit: ctx.results.max, kind: 'recognition' })).results;
    const records = all.filter((r) => r.recognition_model === recognizer).slice(0, RECENT_RECORDS);
    const recent = previewRecent(
      records.flatMap((r) => r.faces ?? []),
      current,
      proposed,
      recognizer === 'embedding' ? { boundOf: (label) => ctx.faces.cohortBoundOf(label) } : {},
    );
    const limits = [
      "Only the nearest person's distance is stored with a face: the margin rule (ratio_max) and one name per picture are not checked again; named faces are taken to pass them, and faces that were ambiguous or given to another face are left out.",
    ];
    if (descriptorModel) {
      limits.push(
        `Stored distances are taken to be of the descriptor model running now (${descriptorModel}); results recorded under another one are not comparable.`,
      );
    }
    const others = all.length - all.filter((r) => r.recognition_model === recognizer).length;
    if (others > 0) limits.push(`${others} stored recognition results of the other recognizer, or that do not say which, are not counted.`);
    return {
      recognizer,
      ...(descriptorModel ? { descriptor_model: descriptorModel } : {}),
      current: thresholdValuesOf(current),
      proposed: thresholdValuesOf(proposed),
      enrolled,
      recent: {
        records: records.length,
        faces: recent.faces,
        evaluated: recent.evaluated,
        not_evaluated: recent.notEvaluated,
        before: recent.before,
        after: recent.after,
        changes: recent.changes,
        limits,
      },
    };
  });

  return app;
}
