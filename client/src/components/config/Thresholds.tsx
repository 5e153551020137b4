/**
 * The Models page's thresholds: per recognizer, when a face gets a name (the limit), when that name is sure, the
 * margin to the next person and the stricter limit of 1:1 verification, each with its default. Administrators (or
 * everyone, with sign-in off) change them: Preview first shows what the proposed values do to the people already
 * enrolled and to the recent recognitions (counts before -> after), Save keeps them on the server (they survive a
 * restart), Reset to default drops the site's own values. The browser's engine takes the new rules at once.
 */
import { createEffect, createSignal, For, Index, on, onMount, Show } from 'solid-js';
import type { RecognitionModel, ThresholdsResponse } from '../../../../shared/api/index';
import { auth } from '../../auth/session';
import { api, ApiFailure } from '../../lib/api';
import { refreshEngineRules } from '../../lib/browser-engine';
import { Notice } from '../Notice';
import { RECOGNITION_TEXT } from './descriptions';
import {
  anyOverridden,
  change,
  defaultText,
  ENROLLED_ROWS,
  formValue,
  isOverridden,
  notEvaluated,
  RECENT_ROWS,
  type RecognizerThresholds,
  resetOf,
  similarityText,
  stepOf,
  THRESHOLD_FIELDS,
  fieldsFor,
  qualityWords,
  type ThresholdKey,
  type ThresholdsPreviewResponse,
  type ThresholdsRequest,
  updateOf,
} from './thresholds';

/** Not the contract's RECOGNITION_MODELS: a value import of the index would bring its zod schemas into the app. */
const RECOGNIZERS: readonly RecognitionModel[] = ['lbph', 'embedding'];

const messageOf = (err: unknown) => (err instanceof ApiFailure ? err.message : String(err));

type Form = Record<ThresholdKey, string>;

function formOf(entry: RecognizerThresholds): Form {
  return Object.fromEntries(THRESHOLD_FIELDS.map((f) => [f.key, formValue(entry, f.key)])) as Form;
}

/** One table of counts, before -> after. */
function CountsTable<K extends string>(props: {
  caption: string;
  testId: string;
  rows: readonly { key: K; label: string }[];
  before: Record<K, number>;
  after: Record<K, number>;
}) {
  return (
    <table class="table" data-testid={props.testId}>
      <caption>{props.caption}</caption>
      <thead>
        <tr>
          <th scope="col">Faces</th>
          <th scope="col">Now → with these values</th>
        </tr>
      </thead>
      <tbody>
        <For each={props.rows}>
          {(row) => (
            <tr>
              <th scope="row">{row.label}</th>
              <td data-testid={`${props.testId}-${row.key}`}>{change(props.before[row.key], props.after[row.key])}</td>
            </tr>
          )}
        </For>
      </tbody>
    </table>
  );
}

/** What the proposed values would do: the enrolled people's photos decided again, and the recent sightings. */
function PreviewTables(props: { recognizer: RecognitionModel; preview: ThresholdsPreviewResponse }) {
  const enrolled = () => props.preview.enrolled;
  const recent = () => props.preview.recent;
  return (
    <div class="threshold-preview" data-testid={`preview-${props.recognizer}`}>
      <Show
        when={enrolled().available}
        fallback={
          <p class="muted small" data-testid="preview-enrolled-none">
            Enrolled people: {enrolled().reason ?? 'nothing to show yet'}.
          </p>
        }
      >
        <CountsTable
          caption={`Enrolled people: ${enrolled().evaluated} photos of ${enrolled().people} ${enrolled().people === 1 ? 'person' : 'people'}, each against the others`}
          testId="preview-enrolled"
          rows={ENROLLED_ROWS}
          before={enrolled().before}
          after={enrolled().after}
        />
      </Show>
      <Show
        when={recent().faces > 0}
        fallback={
          <p class="muted small" data-testid="preview-recent-none">
            Recent recognitions: none stored yet.
          </p>
        }
      >
        <CountsTable
          caption={`Recent recognitions: ${recent().evaluated} of ${recent().faces} faces`}
          testId="preview-recent"
          rows={RECENT_ROWS}
          before={recent().before}
          after={recent().after}
        />
        <Show when={notEvaluated(recent())}>
          {(n) => (
            <p class="muted small" data-testid="preview-not-evaluated">
              {n()} recent {n() === 1 ? 'face' : 'faces'} could not be judged again (what they were compared with was not kept).
            </p>
          )}
        </Show>
      </Show>
    </div>
  );
}

function RecognizerCard(props: {
  recognizer: RecognitionModel;
  entry: RecognizerThresholds;
  active: boolean;
  canEdit: boolean;
  onSaved: () => Promise<void>;
}) {
  const r = () => props.recognizer;
  const id = (part: string) => `thresholds-${r()}-${part}`;
  const [form, setForm] = createSignal<Form>(formOf(props.entry));
  const [preview, setPreview] = createSignal<ThresholdsPreviewResponse | null>(null);
  const [busy, setBusy] = createSignal(false);
  const [problem, setProblem] = createSignal('');
  const [saved, setSaved] = createSignal('');
  // The server's values after a save or reset replace the form's.
  createEffect(
    on(
      () => props.entry,
      (entry) => setForm(formOf(entry)),
      { defer: true },
    ),
  );

  const edit = (key: ThresholdKey, value: string) => {
    setForm({ ...form(), [key]: value });
    setPreview(null);
    setSaved('');
  };

  /** Runs one request with the form's values; says why when the form or the server refuses. */
  const withUpdate = async (run: (update: ThresholdsRequest, changed: number) => Promise<void>) => {
    setProblem('');
    setSaved('');
    const u = updateOf(r(), props.entry, form());
    if ('problem' in u) {
      setProblem(u.problem);
      return;
    }
    setBusy(true);
    try {
      await run(u.update, u.changed);
    } catch (err) {
      setProblem(messageOf(err));
    } finally {
      setBusy(false);
    }
  };

  const showPreview = () =>
    withUpdate(async (update) => {
      setPreview(await api.previewThresholds(update));
    });

  const save = (e: Event) => {
    e.preventDefault();
    void withUpdate(async (update, changed) => {
      if (changed === 0) {
        setSaved('Nothing to save: these are the values in use.');
        return;
      }
      await api.setThresholds(update);
      await props.onSaved();
      setPreview(null);
      const at = similarityText(r(), props.entry, 'max', form().max);
      setSaved(`Saved. ${RECOGNITION_TEXT[r()].title} now names faces up to a distance of ${form().max}${at ? ` (${at})` : ''}.`);
    });
  };

  const reset = async () => {
    setProblem('');
    setSaved('');
    setBusy(true);
    try {
      await api.setThresholds(resetOf(r()));
      await props.onSaved();
      setPreview(null);
      setSaved(`${RECOGNITION_TEXT[r()].title} is back to its default thresholds.`);
    } catch (err) {
      setProblem(messageOf(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form
      class="config-group card thresholds-card"
      data-testid={`thresholds-${r()}`}
      aria-labelledby={id('title')}
      aria-busy={busy()}
      // The form's own messages (updateOf) say what is wrong; the browser's bubbles would stop it first.
      noValidate
      onSubmit={save}
    >
      <h3 id={id('title')} class="config-option-head">
        <span>{RECOGNITION_TEXT[r()].title}</span>
        <Show when={props.active}>
          <span class="chip chip-ok">In use</span>
        </Show>
        <Show when={anyOverridden(props.entry)} fallback={<span class="chip chip-off">Defaults</span>}>
          <span class="chip chip-warn" data-testid={`thresholds-${r()}-own`}>
            Set here
          </span>
        </Show>
      </h3>
      <Show when={props.entry.descriptor_model}>
        {(m) => <p class="muted small">Descriptor model: {m()}. Each model has its own distance scale.</p>}
      </Show>
      <Show when={props.entry.problem}>
        {(why) => (
          <Notice kind="warn" title="The values set here are not in use" testId={`thresholds-${r()}-not-in-use`}>
            {why()}
          </Notice>
        )}
      </Show>
      <Show when={qualityWords(props.entry)}>
        {(words) => (
          <p class="muted small" data-testid={`thresholds-${r()}-quality`}>
            {words()}
          </p>
        )}
      </Show>
      <Index each={fieldsFor(r())}>
        {(f) => (
          <div class="threshold-field">
            <label for={id(f().key)}>{f().label}</label>
            <input
              id={id(f().key)}
              type="number"
              inputmode="decimal"
              min={f().key === 'ratio_max' || f().key === 'cohort_ratio' ? 0 : props.entry.bounds.min}
              max={f().key === 'ratio_max' ? 1 : f().key === 'cohort_ratio' ? 1.5 : props.entry.bounds.max}
              step={stepOf(r(), f().key)}
              value={form()[f().key]}
              readOnly={!props.canEdit}
              aria-describedby={`${id(f().key)}-similarity ${id(f().key)}-default ${id(f().key)}-hint`}
              onInput={(e) => edit(f().key, e.currentTarget.value)}
            />
            {/* #36: the distance in the units of the percentage a face shows, as typed. */}
            <span id={`${id(f().key)}-similarity`} class="threshold-similarity" data-testid={`similarity-${r()}-${f().key}`}>
              {similarityText(r(), props.entry, f().key, form()[f().key]) ?? ''}
            </span>
            <span id={`${id(f().key)}-default`} class="threshold-default" data-testid={`default-${r()}-${f().key}`}>
              {defaultText(props.entry, f().key)}
              {isOverridden(props.entry, f().key) ? ' (set here)' : ''}
            </span>
            <span id={`${id(f().key)}-hint`} class="muted small threshold-hint">
              {f().hint}
              {/* #35: the server refuses a limit past the calibrated bound; say it before it does. */}
              {f().key === 'ratio_max' || f().key === 'cohort_ratio'
                ? ''
                : ` At most ${props.entry.bounds.max}: ${props.entry.bounds.basis}.`}
            </span>
          </div>
        )}
      </Index>
      <Show when={props.canEdit}>
        <div class="threshold-actions">
          <button type="button" class="secondary" disabled={busy()} onClick={() => void showPreview()}>
            Preview
          </button>
          <button type="submit" disabled={busy()}>
            Save
          </button>
          <button type="button" class="secondary" disabled={busy() || !anyOverridden(props.entry)} onClick={() => void reset()}>
            Reset to default
          </button>
        </div>
      </Show>
      <Show when={problem()}>
        <Notice kind="error" title="Not changed" testId={`thresholds-${r()}-problem`}>
          {problem()}
        </Notice>
      </Show>
      <Show when={saved()}>
        <Notice kind="ok" testId={`thresholds-${r()}-saved`}>
          {saved()}
        </Notice>
      </Show>
      <Show when={preview()}>{(p) => <PreviewTables recognizer={r()} preview={p()} />}</Show>
    </form>
  );
}

export function Thresholds(props: { active: RecognitionModel | undefined }) {
  const [data, setData] = createSignal<ThresholdsResponse | null>(null);
  const [loadError, setLoadError] = createSignal('');
  const canEdit = () => !auth.enabled() || auth.isAdmin();

  const load = async () => {
    try {
      setData(await api.thresholds());
      setLoadError('');
    } catch (err) {
      setLoadError(messageOf(err));
    }
  };
  const saved = async () => {
    await load();
    // This browser's engine names faces with the new rules from the next frame on.
    void refreshEngineRules();
  };
  onMount(() => void load());

  return (
    <section class="thresholds" aria-labelledby="thresholds-heading" data-testid="thresholds">
      <h2 id="thresholds-heading">When a face gets a name</h2>
      <p class="muted">
        Each recognizer compares a face with the people it knows by a distance: lower is closer. A face is named when its nearest person is
        within the limit and clearly nearer than the next; otherwise it stays unknown, with the nearest person shown.
      </p>
      <p class="muted" data-testid="thresholds-similarity-note">
        The percentage a named face shows is its similarity: a fixed figure for its distance, whatever the limits are set to. Each limit is
        shown in the same units: at the calibrated limits a face reads 60%.
      </p>
      <Show when={!canEdit()}>
        <p class="muted" data-testid="thresholds-read-only">
          Only administrators can change the thresholds.
        </p>
      </Show>
      <Show when={loadError()}>
        <Notice kind="error" title="Could not read the thresholds" testId="thresholds-load-error">
          {loadError()}
        </Notice>
      </Show>
      <Show when={data()}>
        {(d) => (
          <div class="config-groups">
            <For each={RECOGNIZERS.filter((m) => d()[m])}>
              {(m) => <RecognizerCard recognizer={m} entry={d()[m]} active={props.active === m} canEdit={canEdit()} onSaved={saved} />}
            </For>
          </div>
        )}
      </Show>
    </section>
  );
}
