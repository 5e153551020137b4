/**
 * Model configuration: which recognizer and which face detection method the server uses, and each recognizer's
 * thresholds (components/config/Thresholds.tsx); after a switch of the detection method, whether LBPH needs a
 * retraining, with a button for it (components/config/RetrainHint.tsx). Each option says
 * whether it can be chosen and, when not, why; a choice applies at once (no restart) and the shared status is
 * refreshed so the dashboard shows it. The page keeps asking, since the embedding recognizer loads in the
 * background after start and the remote model server can come and go.
 */
import { createSignal, onCleanup, onMount, Show } from 'solid-js';
import type { DetectionMethod, ModelsAvailableResponse, ModelsConfigResponse, RecognitionModel } from '../../../shared/api/index';
import { ChoiceGroup, type Choice } from '../components/config/ChoiceGroup';
import { Thresholds } from '../components/config/Thresholds';
import { BrowserModelSize } from '../components/config/BrowserModelSize';
import { RetrainHint } from '../components/config/RetrainHint';
import { DETECTION_TEXT, formatWhen, RECOGNITION_TEXT, REMOTE_STATUS_TEXT } from '../components/config/descriptions';
import { Notice, type NoticeKind } from '../components/Notice';
import { api, ApiFailure } from '../lib/api';
import { A } from '@solidjs/router';
import { type PersonSummary, displayNameOf } from '../lib/people';
import { refreshStatus, serverStatus } from '../lib/server-status';
import { outOfDateText, untrainedPeople } from '../components/config/trained-words';

const POLL_MS = 3000;

type Pending = { kind: 'recognition'; value: RecognitionModel } | { kind: 'detection'; value: DetectionMethod };

interface Message {
  kind: NoticeKind;
  title?: string;
  text: string;
}

function TrainingLink() {
  return <A href="/training">Train on the Training page</A>;
}

export default function ModelConfig() {
  const [available, setAvailable] = createSignal<ModelsAvailableResponse | null>(null);
  const [config, setConfig] = createSignal<ModelsConfigResponse | null>(null);
  const [loadError, setLoadError] = createSignal('');
  const [pending, setPending] = createSignal<Pending | null>(null);
  const [message, setMessage] = createSignal<Message | null>(null);

  const load = async () => {
    try {
      const [a, c] = await Promise.all([api.modelsAvailable(), api.modelsConfig()]);
      setAvailable(a);
      setConfig(c);
      setLoadError('');
    } catch (err) {
      setLoadError(err instanceof ApiFailure ? err.message : String(err));
    }
  };

  onMount(() => {
    void load();
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible' && !pending()) void load();
    }, POLL_MS);
    onCleanup(() => clearInterval(timer));
  });

  /** Sends one change, says how it went, and refreshes this page and the dashboard's status. */
  const apply = async (change: Pending) => {
    setPending(change);
    setMessage(null);
    try {
      if (change.kind === 'recognition') {
        const r = await api.setRecognitionModel(change.value);
        const trained = r.recognizers[change.value]?.trained;
        setMessage({
          kind: 'ok',
          text: `Recognition now uses ${change.value}.${trained ? '' : ` ${RECOGNITION_TEXT[change.value].title} has not been trained yet: train before recognizing faces.`}`,
        });
      } else {
        await api.setDetectionMethod(change.value);
        setMessage({ kind: 'ok', text: `Face detection now uses ${change.value}.` });
      }
    } catch (err) {
      setMessage({
        kind: 'error',
        title: change.kind === 'recognition' ? 'The recognition model was not changed' : 'The detection method was not changed',
        text: err instanceof ApiFailure ? err.message : String(err),
      });
    } finally {
      await load();
      setPending(null);
      void refreshStatus();
    }
  };

  const selectedRecognition = () => {
    const p = pending();
    return p?.kind === 'recognition' ? p.value : available()?.recognition_models.find((m) => m.active)?.name;
  };
  const selectedDetection = () => {
    const p = pending();
    return p?.kind === 'detection' ? p.value : available()?.detection_methods.find((m) => m.active)?.name;
  };

  const recognitionChoices = (): Choice<RecognitionModel>[] =>
    (available()?.recognition_models ?? []).map((m) => ({
      value: m.name,
      ...RECOGNITION_TEXT[m.name],
      available: m.available,
      reason: m.reason,
      active: m.active,
    }));

  const isActive = (name: RecognitionModel) => available()?.recognition_models.find((m) => m.active)?.name === name;
  const people = () => (serverStatus.labels()?.details ?? []) as PersonSummary[];

  /** Whether a recognizer is trained, when and on how many people (reactive: the page polls). */
  const trainedDetails = (name: RecognitionModel) => {
    const status = () => config()?.recognizers[name];
    return (
      <span data-testid={`trained-${name}`}>
        <Show
          when={status()?.trained}
          fallback={
            <>
              Not trained yet. <TrainingLink />.
            </>
          }
        >
          Trained{status()!.trained_at ? ` ${formatWhen(status()!.trained_at!)}` : ''} with {status()!.labels}{' '}
          {status()!.labels === 1 ? 'person' : 'people'}.
          {/* The people list says which labels the active model knows: a person added since makes it out of date. */}
          <Show when={isActive(name) && outOfDateText(untrainedPeople(people()).map(displayNameOf))}>
            {(text) => (
              <>
                {' '}
                <strong class="trained-stale" data-testid={`trained-${name}-stale`}>
                  {text()}
                </strong>{' '}
                <TrainingLink />.
              </>
            )}
          </Show>
        </Show>
      </span>
    );
  };

  const detectionChoices = (): Choice<DetectionMethod>[] =>
    (available()?.detection_methods ?? []).map((m) => ({
      value: m.name,
      ...DETECTION_TEXT[m.name],
      available: m.available,
      reason: m.reason,
      active: m.active,
    }));

  const detectionDetails = (name: DetectionMethod) => {
    const remote = () => available()?.detection_methods.find((m) => m.name === name)?.status;
    return <Show when={remote()}>{(s) => <span data-testid="remote-status">Model server: {REMOTE_STATUS_TEXT[s()]}.</span>}</Show>;
  };

  return (
    <section class="config-page">
      <h1>Models</h1>
      <p class="muted">
        Choose how Lookout finds faces in a picture and how it tells people apart. A change applies to the next request at once; nothing
        restarts.
      </p>

      <Show when={message()}>
        {(m) => (
          <Notice kind={m().kind} title={m().title} testId="config-message">
            {m().text}
          </Notice>
        )}
      </Show>
      <Show when={loadError()}>
        <Notice kind="error" title="Could not read the model settings" testId="config-load-error">
          {loadError()} Lookout keeps trying.
        </Notice>
      </Show>

      <Show
        when={available() && config()}
        fallback={
          <Show when={!loadError()}>
            <p role="status">Loading the model settings…</p>
          </Show>
        }
      >
        <div class="config-groups">
          <ChoiceGroup
            name="recognition"
            legend="Recognition model"
            hint="Tells people apart once a face is found. Each model is trained separately from the same photos."
            choices={recognitionChoices()}
            selected={selectedRecognition()}
            pending={pending() !== null}
            onChoose={(value) => void apply({ kind: 'recognition', value })}
            details={trainedDetails}
          />
          <ChoiceGroup
            name="detection"
            legend="Face detection method"
            hint="Finds the faces in a picture, for recognition and for training."
            choices={detectionChoices()}
            selected={selectedDetection()}
            pending={pending() !== null}
            onChoose={(value) => void apply({ kind: 'detection', value })}
            details={detectionDetails}
          />
        </div>
        <Show when={pending()}>
          <p role="status" class="muted">
            Switching…
          </p>
        </Show>
        <RetrainHint
          needed={config()!.retrain_recommended === true}
          trainedWith={config()!.trained_detection_method ?? null}
          active={config()!.detection_method}
          onRetrained={load}
        />
      </Show>

      <Thresholds active={available()?.recognition_models.find((m) => m.active)?.name} />
      <BrowserModelSize />
    </section>
  );
}
