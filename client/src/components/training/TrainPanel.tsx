/**
 * Training: POST /api/train while GET /api/train/status is polled for the progress bar, then the summary a
 * person needs: who was learnt, from how many faces, how many images were reused from earlier trainings and how
 * many computed, and which photos had no face (to retake). A run already
 * going (409) is followed to its end instead of failing; "no photos" and "no face" (422) say what to do.
 */
import { createEffect, createMemo, createSignal, For, Match, on, onCleanup, Show, Switch } from 'solid-js';
import type { TrainResponse, TrainStatusResponse } from '../../../../shared/api/index';
import { ApiImage } from '../../auth/ApiImage';
import { api, ApiFailure } from '../../lib/api';
import { displayNameOf } from '../../lib/people';
import { refreshStatus, serverStatus } from '../../lib/server-status';
import { Notice } from '../Notice';
import { DeleteImageButton } from './DeleteImageButton';
import { computedWorkText, featuresText, progressText } from './train-words';

/**
 * The server counts each image as it is done (GET /api/train/status); a few photos take a second or two, so a
 * slower poll (it was 500 ms) skips most steps. A status answer is a few hundred bytes; each poll is one info line in
 * the server log.
 */
export const TRAIN_POLL_MS = 250;

type Phase =
  | { kind: 'idle' }
  | { kind: 'saving' }
  | { kind: 'running'; processed: number; total: number; reused?: number; computed?: number; waitingForOther: boolean }
  | { kind: 'done'; result: TrainResponse; byOtherRun: boolean }
  | { kind: 'error'; title: string; message: string; detail?: string };

const NOT_TRAINED = 'Not trained yet';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function TrainPanel(props: {
  /** Runs first (saving unsaved photos); resolves with the reason when training cannot start, else null. */
  prepare: () => Promise<string | null>;
  /** Unsaved photos, to say they will be saved first. */
  unsaved: number;
  /** No photo saved anywhere and none waiting: training could only fail. */
  nothingToTrain: boolean;
  onFinished: () => void;
}) {
  const [phase, setPhase] = createSignal<Phase>({ kind: 'idle' });
  let alive = true;
  onCleanup(() => (alive = false));
  const busy = () => phase().kind === 'running' || phase().kind === 'saving';
  let panel!: HTMLDivElement;

  // The Train button is disabled while it runs, which drops the focus to the page: it goes to what the run says
  // instead (the progress, then the summary or the error), so keyboard and screen reader users are not lost.
  const kind = createMemo(() => phase().kind);
  createEffect(
    on(
      kind,
      (kind) => {
        if (kind === 'idle') return;
        // Focus put somewhere on purpose (the name field, when the name is missing) stays there.
        const active = document.activeElement;
        if (active && active !== document.body && !panel.contains(active)) return;
        const box = panel.querySelector<HTMLElement>('[data-focus-target]');
        // The message box itself where there is one: a screen reader then reads its title and text.
        const target = box?.querySelector<HTMLElement>('.notice') ?? box;
        if (!target) return;
        target.tabIndex = -1;
        target.focus();
      },
      { defer: true },
    ),
  );

  // "Not trained yet" (training could not start) is stale once the people or the model change (the queued photos
  // arrived, a training elsewhere): it goes rather than contradict the new state. A memo, because the status poll
  // sets a new readiness object every few seconds: only a changed value may clear the box.
  const modelTrained = createMemo(() => serverStatus.ready()?.recognizer_trained);
  createEffect(
    on(
      [serverStatus.labelsChanged, modelTrained],
      () => {
        const p = phase();
        if (p.kind === 'error' && p.title === NOT_TRAINED) setPhase({ kind: 'idle' });
      },
      { defer: true },
    ),
  );

  /** Polls until `until()` says stop; returns the last status seen. */
  const follow = async (until: () => boolean, waitingForOther: boolean): Promise<TrainStatusResponse | null> => {
    let last: TrainStatusResponse | null = null;
    while (alive && !until()) {
      await sleep(TRAIN_POLL_MS);
      if (!alive || until()) break;
      try {
        last = await api.trainStatus();
      } catch {
        continue; // a missed poll only delays the bar; the POST's own answer decides the outcome
      }
      if (until()) break;
      if (last.state === 'running') {
        const { processed, total, reused, computed } = last;
        setPhase({ kind: 'running', processed, total, reused, computed, waitingForOther });
      } else if (waitingForOther) break;
    }
    return last;
  };

  const train = async () => {
    if (busy()) return;
    if (props.unsaved > 0) setPhase({ kind: 'saving' });
    const blocked = await props.prepare();
    if (blocked) {
      setPhase({ kind: 'error', title: NOT_TRAINED, message: blocked });
      return;
    }
    setPhase({ kind: 'running', processed: 0, total: 0, waitingForOther: false });
    let finished = false;
    const polling = follow(() => finished, false);
    try {
      const result = await api.train();
      finished = true;
      setPhase({ kind: 'done', result, byOtherRun: false });
    } catch (err) {
      finished = true;
      await polling;
      if (err instanceof ApiFailure && err.status === 409 && err.code === 'training_in_progress') {
        await followOtherRun();
      } else {
        setPhase(describeFailure(err));
      }
    } finally {
      finished = true;
      void refreshStatus();
      props.onFinished();
    }
  };

  // Someone else (another tab, the second-factor enrolment) is training: show its progress and its result.
  const followOtherRun = async () => {
    setPhase({ kind: 'running', processed: 0, total: 0, waitingForOther: true });
    const started = Date.now();
    const last = await follow(() => false, true);
    if (!alive) return;
    const final = last?.state === 'idle' ? last : await api.trainStatus().catch(() => null);
    if (final?.last && Date.parse(final.last.trained_at) >= started - 60_000) {
      setPhase({ kind: 'done', result: final.last, byOtherRun: true });
    } else if (final?.last_error) {
      setPhase(describeFailure(new ApiFailure(final.last_error.message, 422, final.last_error.code)));
    } else {
      setPhase({ kind: 'error', title: 'Training', message: 'The other training run has ended. Train again to include your photos.' });
    }
    void refreshStatus();
  };

  return (
    <div class="training-train" data-testid="train-panel" ref={panel}>
      <div class="row">
        <button
          type="button"
          class="training-train-button"
          disabled={busy() || props.nothingToTrain}
          aria-describedby="training-train-hint"
          onClick={() => void train()}
        >
          {busy() ? 'Training…' : 'Train the model'}
        </button>
        <span class="muted" id="training-train-hint">
          <Switch fallback="Learns from every saved photo of every person.">
            <Match when={props.unsaved > 0}>
              Saves the {props.unsaved} new {props.unsaved === 1 ? 'photo' : 'photos'} first, then learns from every saved photo.
            </Match>
            <Match when={props.nothingToTrain}>Nothing to train on yet: take photos of someone first.</Match>
          </Switch>
        </span>
      </div>

      <Switch>
        <Match when={phase().kind === 'saving'}>
          <p role="status" class="training-progress" data-focus-target>
            Saving the new photos before training…
          </p>
        </Match>
        <Match when={phase().kind === 'running' && (phase() as Extract<Phase, { kind: 'running' }>)}>
          {(p) => (
            <div class="training-progress" role="status" data-testid="train-progress" data-focus-target>
              <Show when={p().waitingForOther}>
                <p>Another training run was already going; Lookout is waiting for it to finish.</p>
              </Show>
              <label for="training-progress-bar">{progressText(p().processed, p().total, p().reused, p().computed)}</label>
              {/* Indeterminate until the server knows how many images there are (a progress's value cannot be unset). */}
              <Show when={p().total > 0} fallback={<progress id="training-progress-bar" />}>
                <progress id="training-progress-bar" max={p().total} value={p().processed} />
              </Show>
            </div>
          )}
        </Match>
        <Match when={phase().kind === 'done' && (phase() as Extract<Phase, { kind: 'done' }>)}>
          {(p) => <Summary result={p().result} byOtherRun={p().byOtherRun} onImageDeleted={props.onFinished} />}
        </Match>
        <Match when={phase().kind === 'error' && (phase() as Extract<Phase, { kind: 'error' }>)}>
          {(p) => (
            <div data-focus-target class="training-focus">
              <Notice kind="error" title={p().title} testId="train-error">
                <p class="training-notice-line">{p().message}</p>
                <Show when={p().detail}>
                  <p class="training-notice-line training-detail">{p().detail}</p>
                </Show>
              </Notice>
            </div>
          )}
        </Match>
      </Switch>
    </div>
  );
}

function describeFailure(err: unknown): Extract<Phase, { kind: 'error' }> {
  if (!(err instanceof ApiFailure)) return { kind: 'error', title: 'Training failed', message: String(err) };
  if (err.unreachable) return { kind: 'error', title: 'Training did not start', message: err.message };
  if (err.code === 'no_training_data') {
    return {
      kind: 'error',
      title: 'Nothing to train on',
      message: 'There are no saved photos yet. Enter a name, take 3 to 5 photos and save them first.',
    };
  }
  if (err.code === 'no_faces_found') {
    return {
      kind: 'error',
      title: 'No face found',
      message:
        'Lookout could not find a face in any saved photo, so nothing was learnt and the previous model is still in use. Retake the photos: face the camera, fill the picture with the face, in even light.',
      detail: err.message,
    };
  }
  if (err.code === 'remote_unavailable') {
    return {
      kind: 'error',
      title: 'Training stopped',
      message: `${err.message} Switch detection to local on the Models page, or try again later.`,
    };
  }
  return { kind: 'error', title: 'Training failed', message: err.message };
}

function Summary(props: { result: TrainResponse; byOtherRun: boolean; onImageDeleted: () => void }) {
  const r = () => props.result;
  // Photos without a face deleted from here, by `label/filename`.
  const [deleted, setDeleted] = createSignal<ReadonlySet<string>>(new Set());
  const deleteDone = (key: string) => {
    setDeleted(new Set([...deleted(), key]));
    props.onImageDeleted();
  };
  const used = () => r().images_total - r().images_skipped.length;
  return (
    <div class="training-summary" data-testid="train-summary">
      <div class="training-progress">
        <label for="training-progress-done">
          {progressText(r().images_total, r().images_total, r().features?.reused, r().features?.computed)}
        </label>
        <progress id="training-progress-done" max={r().images_total} value={r().images_total} />
      </div>
      <div data-focus-target class="training-focus" data-testid="train-finished">
        <Notice kind="ok" title={props.byOtherRun ? 'Training finished (started elsewhere)' : 'Training finished'}>
          <p class="training-notice-line">
            Lookout now knows {r().total_labels} {r().total_labels === 1 ? 'person' : 'people'}, learnt from {r().total_faces}{' '}
            {r().total_faces === 1 ? 'face' : 'faces'} ({used()} of {r().images_total} images had a usable face). Took{' '}
            {(r().duration_ms / 1000).toFixed(1)} s.
          </p>
          <Show when={featuresText(r().features)}>
            {(text) => (
              <p class="training-notice-line" data-testid="train-features">
                {text()} <span class="training-detail">{computedWorkText(r().features)}</span>
              </p>
            )}
          </Show>
        </Notice>
      </div>
      <table class="table training-summary-table">
        <caption class="training-sr-only">Faces used per person</caption>
        <thead>
          <tr>
            <th scope="col">Person</th>
            <th scope="col">Faces used</th>
          </tr>
        </thead>
        <tbody>
          <For each={r().labels}>
            {(label) => (
              <tr>
                {/* The name people typed, not the stored label (#36: `albert-einstein`). */}
                <td class="training-label">{displayNameOf(label)}</td>
                <td>{r().faces_per_label[label] ?? 0}</td>
              </tr>
            )}
          </For>
        </tbody>
        <tfoot>
          <tr>
            <th scope="row">Total</th>
            <td>{r().total_faces}</td>
          </tr>
        </tfoot>
      </table>
      <Show when={r().images_skipped.length > 0}>
        <Notice
          kind="warn"
          title={`${r().images_skipped.length} ${r().images_skipped.length === 1 ? 'image was' : 'images were'} not used`}
          testId="train-skipped"
        >
          <p class="training-notice-line">
            Lookout found no face in these, so they taught it nothing. Delete them, and retake them: look straight at the camera, close
            enough that the face fills much of the picture, in even light.
          </p>
          <ul class="training-skipped">
            <For each={r().images_skipped}>
              {(s) => (
                <li>
                  <ApiImage src={api.imageUrl(s.label, s.filename)} alt="" loading="lazy" />
                  <span>
                    <strong class="training-label">{s.label}</strong> / {s.filename} —{' '}
                    {s.reason === 'no_face' ? 'no face found' : 'the file could not be read'}
                  </span>
                  <Show
                    when={!deleted().has(`${s.label}/${s.filename}`)}
                    fallback={
                      <span class="muted" role="status">
                        Deleted
                      </span>
                    }
                  >
                    <DeleteImageButton
                      label={s.label}
                      filename={s.filename}
                      name={`Delete ${s.filename} of ${s.label}`}
                      onDeleted={() => deleteDone(`${s.label}/${s.filename}`)}
                    />
                  </Show>
                </li>
              )}
            </For>
          </ul>
        </Notice>
      </Show>
      <p class="muted">
        Recognition model: {r().recognition_model}
        {r().recognizers_trained.length > 1
          ? ` (also trained: ${r()
              .recognizers_trained.filter((m) => m !== r().recognition_model)
              .join(', ')})`
          : ''}
        ; face detection: {r().detection_method}.
      </p>
    </div>
  );
}
