/**
 * Training in this browser, offered while the server cannot be reached: a kiosk learns the photos just taken
 * so it recognises the person at once. The photos still wait in the offline queue and reach the server, which
 * trains for good when it is back.
 */
import { createSignal, For, Match, Show, Switch } from 'solid-js';
import type { TrainResult } from '../../engine/client';
import { trainInBrowser } from '../../lib/browser-engine';
import { Notice } from '../Notice';

type Phase = { kind: 'idle' } | { kind: 'running' } | { kind: 'done'; result: TrainResult } | { kind: 'error'; message: string };

export function BrowserTraining(props: { samples: () => { label: string; blob: Blob }[] }) {
  const [phase, setPhase] = createSignal<Phase>({ kind: 'idle' });
  const run = async () => {
    setPhase({ kind: 'running' });
    try {
      setPhase({ kind: 'done', result: await trainInBrowser(props.samples()) });
    } catch (err) {
      setPhase({ kind: 'error', message: err instanceof Error ? err.message : String(err) });
    }
  };
  return (
    <div class="browser-training" data-testid="browser-training">
      <p class="muted">
        The server cannot be reached. This browser can learn the photos on this page now, so this device recognises the person at once; the
        server learns them when it is back.
      </p>
      <button
        type="button"
        class="secondary"
        disabled={props.samples().length === 0 || phase().kind === 'running'}
        onClick={() => void run()}
      >
        {phase().kind === 'running' ? 'Training in this browser…' : 'Train in this browser'}
      </button>
      <Switch>
        <Match when={phase().kind === 'done' && (phase() as { result: TrainResult }).result}>
          {(r) => (
            <Show
              when={r().total_faces > 0}
              fallback={
                <Notice kind="error" title="Nothing learnt">
                  No face was found in these photos. Take them facing the camera in good light.
                </Notice>
              }
            >
              <Notice kind="ok" title="Trained in this browser">
                Learnt{' '}
                <For each={r().labels}>
                  {(l, i) => (
                    <>
                      {i() > 0 ? ', ' : ''}
                      <strong>{l}</strong>
                    </>
                  )}
                </For>{' '}
                from {r().total_faces} {r().total_faces === 1 ? 'face' : 'faces'}. Live recognition in this browser knows them now.
                <Show when={r().skipped.length > 0}>
                  {' '}
                  {r().skipped.length} {r().skipped.length === 1 ? 'photo had' : 'photos had'} no face.
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
