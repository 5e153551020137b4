/**
 * #36 2: a merge reaches the trained models at once. Merging A into B rewrites the saved models (LBPH and embedding)
 * with A's samples under B's label id and A's name gone, as a training on the merged photos would have them; every
 * consumer then answers B with no map of its own: the server's workers (they reload the files, as after a
 * deletion), the compact model browsers and kiosks sync (made from the files: B's segment holds A's samples), and
 * OpenCV clients that download training.yml and model.pickle. The margin rule sees one person, as the shared decision
 * code ranks by label id, and the recognition path gains nothing: not even a lookup.
 *
 * The undo needs to know which of B's samples were A's: the merge notes a fingerprint (SHA-256) of each sample it
 * relabelled in the merge's action (person_actions.detail.models), and the undo gives A back the samples of B that
 * match them (as many as were noted of each). A training since the merge makes the same samples from the same photos
 * (the feature cache keeps them), so the undo finds them then too; where it finds none of them, the models are left
 * as they are and the undo says to train.
 */
import { createHash } from 'node:crypto';
import type { LabelIds } from '../../shared/recognition/model-files.js';
import type { AppContext } from '../http/context.js';
import { ApiError } from '../http/errors.js';
import { LockBusyError } from '../storage/file-lock.js';
import type { SampleRelabel } from '../storage/model-store.js';

/** One model's part of a merge: A's label id there and a fingerprint of each of A's samples. */
export interface MovedSamples {
  id: number;
  samples: string[];
}

/** What a merge changed in the trained models, kept in its action for the undo. */
export interface MergedModels {
  lbph?: MovedSamples;
  embedding?: MovedSamples;
}

/** What a merge and its undo ask of the trained models (PersonActions). */
export interface ActionModels {
  /** The training lock of every replica, held while photos and models change; 409 training_in_progress when busy. */
  lock(): Promise<{ release(): Promise<void> }>;
  /** A's samples named B in the saved models; null when no model knows A. The caller holds the lock. */
  merge(label: string, into: string): Promise<MergedModels | null>;
  /** The merge's samples named A again; true when every model the merge changed has them back. Holding the lock. */
  unmerge(label: string, into: string, moved: MergedModels): Promise<boolean>;
  /** After the lock is given back: this server's workers run the rewritten models (they know `label`, or not). */
  loaded(label: string, known: boolean): Promise<void>;
}

const fingerprint = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex').slice(0, 32);
const nextId = (labelIds: LabelIds) => Math.max(-1, ...Object.values(labelIds)) + 1;

/** A's samples under B's id (a new one when the model has no B), A's name out; `moved` learns what was A's. */
export function mergeSamples(from: string, into: string, moved: (m: MovedSamples) => void): SampleRelabel {
  return (labels, labelIds, sample) => {
    if (!Object.hasOwn(labelIds, from)) return null;
    const fromId = labelIds[from];
    const intoId = Object.hasOwn(labelIds, into) ? labelIds[into] : nextId(labelIds);
    const out = Int32Array.from(labels);
    const samples: string[] = [];
    for (let i = 0; i < labels.length; i++) {
      if (labels[i] !== fromId) continue;
      out[i] = intoId;
      samples.push(fingerprint(sample(i)));
    }
    const { [from]: _gone, ...rest } = labelIds;
    if (samples.length > 0) rest[into] = intoId;
    moved({ id: fromId, samples });
    return { labels: out, labelIds: rest };
  };
}

/**
 * The undo of mergeSamples: the samples of B (of anyone, when the model has no B any more: B merged on since) that
 * match A's fingerprints, as many as were noted of each, named A again, under A's old id when it is free. Null
 * when the model knows A again (a training since) or holds none of them. `restored` learns how many.
 */
export function unmergeSamples(label: string, into: string, moved: MovedSamples, restored: (n: number) => void): SampleRelabel {
  return (labels, labelIds, sample) => {
    if (Object.hasOwn(labelIds, label)) return null;
    const wanted = new Map<string, number>();
    for (const s of moved.samples) wanted.set(s, (wanted.get(s) ?? 0) + 1);
    const id = Object.values(labelIds).includes(moved.id) ? nextId(labelIds) : moved.id;
    const intoId = Object.hasOwn(labelIds, into) ? labelIds[into] : undefined;
    const out = Int32Array.from(labels);
    let found = 0;
    for (let i = 0; i < labels.length && found < moved.samples.length; i++) {
      if (intoId !== undefined && labels[i] !== intoId) continue;
      const print = fingerprint(sample(i));
      const left = wanted.get(print) ?? 0;
      if (left === 0) continue;
      wanted.set(print, left - 1);
      out[i] = id;
      found++;
    }
    restored(found);
    if (found === 0) return null;
    const names: LabelIds = { ...labelIds, [label]: id };
    // B had no samples of their own (untrained before the merge): no name without samples.
    if (intoId !== undefined && !out.includes(intoId)) delete names[into];
    return { labels: out, labelIds: names };
  };
}

/** The trained models of this server's ModelStore and FaceService, for PersonActions. */
export function actionModels(ctx: Pick<AppContext, 'models' | 'faces' | 'log'>): ActionModels {
  return {
    async lock() {
      try {
        return await ctx.models.trainingLock.acquire();
      } catch (err) {
        if (err instanceof LockBusyError)
          throw new ApiError(
            'training_in_progress',
            'a training runs now and reads the photos: merge or undo after it (nothing was changed)',
          );
        throw err;
      }
    },

    async merge(label, into) {
      const moved: MergedModels = {};
      const changed = await ctx.models.rewriteLabels({
        lbph: mergeSamples(label, into, (m) => {
          moved.lbph = m;
        }),
        embedding: mergeSamples(label, into, (m) => {
          moved.embedding = m;
        }),
      });
      if (!changed.lbph) delete moved.lbph;
      if (!changed.embedding) delete moved.embedding;
      return changed.lbph || changed.embedding ? moved : null;
    },

    async unmerge(label, into, moved) {
      const back = { lbph: 0, embedding: 0 };
      const none: SampleRelabel = () => null;
      const changed = await ctx.models.rewriteLabels({
        lbph: moved.lbph
          ? unmergeSamples(label, into, moved.lbph, (n) => {
              back.lbph = n;
            })
          : none,
        embedding: moved.embedding
          ? unmergeSamples(label, into, moved.embedding, (n) => {
              back.embedding = n;
            })
          : none,
      });
      const whole = (kind: 'lbph' | 'embedding') => {
        const samples = moved[kind]?.samples.length ?? 0;
        return samples === 0 || (changed[kind] && back[kind] === samples);
      };
      return whole('lbph') && whole('embedding');
    },

    async loaded(label, known) {
      if (!(await ctx.faces.reloadUntil(label, known)))
        ctx.log.warn(`the models rewritten for ${label} are not loaded yet; the model watch loads them`);
    },
  };
}
