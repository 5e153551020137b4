/**
 * The dashboard: on a first run (nobody added yet) one clear first step, "Add your first person", ahead of the
 * rest; the spec's four indicators (Model Trained badge, Detection chip, Remote connected, Object
 * detector ready), the event processor when the server relays one, and every person (the name typed for them,
 * their label beside it when it differs) with their image count, kept
 * current by the shared server state (lib/server-status.ts). Offline it shows the last known state and its age.
 */
import { createSignal, For, onCleanup, Show } from 'solid-js';
import type { ReadyResponse } from '../../../shared/api/index';
import { A } from '@solidjs/router';
import { ProcessorCard } from '../components/ProcessorCard';
import { type PersonSummary, shownName } from '../lib/people';
import { ageText, serverStatus } from '../lib/server-status';
import './dashboard.css';

const REMOTE_TEXT: Record<ReadyResponse['remote_status'], string> = {
  connected: 'Connected',
  unreachable: 'Unreachable',
  model_not_ready: 'Model not ready',
  disabled: 'Not configured',
};

/** Where faces are found, in words (the server's own term kept in brackets, as the Models page names it). */
const DETECTION_TEXT: Record<ReadyResponse['detection_method'], string> = {
  local: 'On this server (local)',
  remote: 'On the model server (remote)',
};

const OBJECT_TEXT: Record<ReadyResponse['object_detection_state'], string> = {
  ready: 'Ready',
  loading: 'Loading…',
  not_loaded: 'Ready, loads on first use',
  unavailable: 'Switched off',
  error: 'Failed to load',
};

function Indicator(props: { name: string; value: string; tone: 'ok' | 'warn' | 'off' | 'error'; testId: string }) {
  return (
    <div class="indicator" data-testid={props.testId}>
      <span class="indicator-name">{props.name}</span>
      <span class={`chip chip-${props.tone}`}>{props.value}</span>
    </div>
  );
}

/**
 * The Model indicator from readiness and the people: a model whose people have all been deleted still answers
 * (the server keeps it until the next training) but is not "Trained" for anyone stored.
 */
export function modelText(trained: boolean, people: readonly { trained: boolean }[] | undefined): { value: string; tone: 'ok' | 'warn' } {
  if (!trained) return { value: 'Not trained', tone: 'warn' };
  if (people && !people.some((p) => p.trained)) return { value: 'Out of date: train again', tone: 'warn' };
  return { value: 'Trained', tone: 'ok' };
}

export function Dashboard() {
  const ready = serverStatus.ready;
  const labels = serverStatus.labels;
  // The age of a last known state, kept ticking while the server is away.
  const [now, setNow] = createSignal(new Date());
  const tick = setInterval(() => setNow(new Date()), 15_000);
  onCleanup(() => clearInterval(tick));
  const offline = () => serverStatus.reachable() === false;
  const model = () => modelText(ready()?.recognizer_trained ?? false, labels()?.details);
  return (
    <section>
      <h1>Dashboard</h1>
      <Show when={offline()}>
        <p class="muted" role="status" data-testid="last-known">
          <Show when={serverStatus.updatedAt()} fallback="The server has not answered on this device yet.">
            {(at) => (
              <>
                Last known state, from {ageText(at(), now())} (<time datetime={at().toISOString()}>{at().toLocaleString()}</time>).
              </>
            )}
          </Show>
        </p>
      </Show>
      {/* A first run leads with the one thing to do; the service's state follows, for when something is wrong. */}
      <Show when={!offline() && labels()?.count === 0}>
        <section class="card first-step" aria-labelledby="first-step-title" data-testid="first-step">
          <h2 id="first-step-title">Add your first person</h2>
          <p>Lookout recognises the people you teach it. Type a name, take 3 to 5 photos of the person, and train: it takes a minute.</p>
          <A class="button" href="/training">
            Add your first person
          </A>
        </section>
        <h2 class="first-step-status">Service status</h2>
      </Show>
      <Show when={ready()} fallback={<p role="status">{offline() ? 'Waiting for the server…' : 'Loading…'}</p>}>
        {(r) => (
          <section class="indicators" aria-label="Service status">
            <Indicator name="Trained model" testId="indicator-trained" value={model().value} tone={model().tone} />
            <Indicator name="Face detection" testId="indicator-detection" value={DETECTION_TEXT[r().detection_method]} tone="ok" />
            <Indicator
              name="Model server"
              testId="indicator-remote"
              value={REMOTE_TEXT[r().remote_status]}
              tone={r().remote_status === 'connected' ? 'ok' : r().remote_status === 'disabled' ? 'off' : 'error'}
            />
            <Indicator
              name="Object detector"
              testId="indicator-objects"
              value={OBJECT_TEXT[r().object_detection_state]}
              tone={
                r().object_detection_state === 'ready' || r().object_detection_state === 'not_loaded'
                  ? 'ok'
                  : r().object_detection_state === 'loading'
                    ? 'warn'
                    : r().object_detection_state === 'error'
                      ? 'error'
                      : 'off'
              }
            />
          </section>
        )}
      </Show>
      <p class="muted">
        Recognition model: <strong>{ready()?.recognition_model ?? '…'}</strong>. <A href="/config">Change models</A>
      </p>
      <ProcessorCard />

      <h2>People</h2>
      <Show when={labels()} fallback={<p role="status">{offline() ? 'Waiting for the server…' : 'Loading…'}</p>}>
        {(l) => (
          <Show
            when={l().count > 0}
            fallback={
              <p data-testid="labels-empty">
                Nobody has been added yet. <A href="/training">Add a person on the training page</A>.
              </p>
            }
          >
            <table class="table" data-testid="labels-table">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Images</th>
                  <th scope="col">In the trained model</th>
                </tr>
              </thead>
              <tbody>
                <For each={l().details as PersonSummary[]}>
                  {(d) => (
                    <tr>
                      <td>
                        {shownName(d)}
                        <Show when={shownName(d) !== d.label}>
                          {' '}
                          <span class="muted training-label">({d.label})</span>
                        </Show>
                      </td>
                      <td>{d.images}</td>
                      <td>{d.trained ? 'Yes' : 'No: train again'}</td>
                    </tr>
                  )}
                </For>
              </tbody>
            </table>
          </Show>
        )}
      </Show>
    </section>
  );
}
