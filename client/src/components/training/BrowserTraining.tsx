/**
 * Training in this browser, offered while the server cannot be reached: a kiosk learns the photos just taken
 * so it recognises the person at once. The model is kept on this device (every page and tab, after a reload
 * too) until the server has one that replaces it; the photos are queued for the server at the same time
 * (`keep`), so it can train for good when it is back. A disabled button always says why.
 */
import { createResource, createSignal, For, Match, Show, Switch } from 'solid-js';
import type { TrainResult } from '../../engine/client';
import { browserEngine, storedLocalModel, trainInBrowser } from '../../lib/browser-engine';
import { Notice } from '../Notice';

type Phase =
  | { kind: 'idle' }
  | { kind: 'running' }
  | { kind: 'done'; result: TrainResult; kept: boolean }
  | { kind: 'error'; message: string };

export function BrowserTraining(props: {
  /** The photos on the page with the label each is learnt under (none without a valid name). */
  samples: () => { label: string; blob: Blob }[];
  /** Photos on the page, named or not. */
  photos: number;
  /** Resolves once the files picked so far are on the page (they are read one at a time). */
  filesAdded: () => Promise<void>;
  /** Queues the page's unsaved photos for the server (the Save path); false when some could not be kept. */
  keep: () => Promise<boolean>;
}) {
  const [phase, setPhase] = createSignal<Phase>({ kind: 'idle' });
  // The model kept from an earlier training here (a reload): read from the device before the engine starts.
  const [stored] = createResource(storedLocalModel);
  const known = () => (browserEngine.state() === 'idle' ? stored() : browserEngine.localModel()) ?? null;

  const blocked = (): string | null => {
    if (phase().kind === 'running') return null;
    if (browserEngine.state() === 'failed') return `This browser cannot run the models (${browserEngine.error()}).`;
    if (props.photos === 0) return 'Take or add photos of the person above first.';
    if (props.samples().length === 0) return 'Type the person’s name above first: the photos are learnt under it.';
    return null;
  };

  const run = async () => {
    setPhase({ kind: 'running' });
    try {
      await props.filesAdded(); // pressed while files were still being read: they are learnt too
      const result = await trainInBrowser(props.samples());
      // The server must get the photos too, whether or not Save was pressed: they wait in the offline queue.
      const kept = await props.keep().catch(() => false);
      setPhase({ kind: 'done', result, kept });
    } catch (err) {
      setPhase({ kind: 'error', message: err instanceof Error ? err.message : String(err) });
    }
  };
  return (
    <div class="browser-training" data-testid="browser-training">
      <p class="muted">
        The server cannot be reached. This browser can learn the photos on this page now, so this device recognises the person at once; the
        photos wait on this device and the server learns them when it is back.
      </p>
      <Show when={phase().kind !== 'done' && known()}>
        {(m) => (
          <p class="muted" data-testid="browser-model">
            This browser already knows <Names labels={m().labels} /> (trained here {new Date(m().trainedAt).toLocaleString()}). Live
            recognition on this device uses that model until the server has learnt them.
          </p>
        )}
      </Show>
      <button
        type="button"
        class="secondary"
        disabled={blocked() !== null || phase().kind === 'running'}
        aria-describedby={blocked() ? 'browser-training-reason' : undefined}
        onClick={() => void run()}
      >
        {phase().kind === 'running' ? 'Training in this browser…' : 'Train in this browser'}
      </button>
      <Show when={blocked()}>
        {(why) => (
          <p class="muted small" id="browser-training-reason" data-testid="browser-training-reason">
            {why()}
          </p>
        )}
      </Show>
      <Switch>
        <Match when={phase().kind === 'done' && (phase() as Extract<Phase, { kind: 'done' }>)}>
          {(p) => (
            <Show
              when={p().result.total_faces > 0}
              fallback={
                <Notice kind="error" title="Nothing learnt">
                  No face was found in these photos. Take them facing the camera in good light.
                </Notice>
              }
            >
              <Notice kind="ok" title="Trained in this browser">
                Learnt <Names labels={p().result.labels} /> from {p().result.total_faces} {p().result.total_faces === 1 ? 'face' : 'faces'}.
                Live recognition on this device knows them now, also after a reload.
                <Show when={p().result.skipped.length > 0}>
                  {' '}
                  {p().result.skipped.length} {p().result.skipped.length === 1 ? 'photo had' : 'photos had'} no face.
                </Show>{' '}
                <Show when={p().kept} fallback={<>Some photos could not be kept for the server: see the photos above.</>}>
                  The photos wait on this device and go to the server when it is back; train there then.
                </Show>
              </Notice>
            </Show>
          )}
        </Match>
        <Match when={phase().kind === 'error'}>
          <Notice kind="error" title="Training in this browser failed">
            {(phase() as { message: string }).message}
          </Notice>
        </Match>
      </Switch>
    </div>
  );
}

function Names(props: { labels: string[] }) {
  return (
    <For each={props.labels}>
      {(l, i) => (
        <>
          {i() > 0 ? ', ' : ''}
          <strong>{l}</strong>
        </>
      )}
    </For>
  );
}
