/**
 * Object detection: the camera (or an uploaded photo) with a box per object in its class's colour, a count
 * per class, and a slider for the minimum confidence. It waits while the detector loads and says plainly
 * when the server has it switched off or it failed to load.
 */
import { createSignal, Match, onCleanup, onMount, Show, Switch } from 'solid-js';
import type { ObjectDetectionResponse, ObjectStatusResponse } from '../../../shared/api/index';
import { AnalysisError, type AnalysisFailure } from '../components/analysis/AnalysisError';
import { errorText, isUnreachable } from '../components/analysis/errors';
import { ObjectSummary } from '../components/analysis/ObjectSummary';
import { CameraOrPhoto } from '../components/analysis/CameraOrPhoto';
import { SourceSwitch, type Source } from '../components/analysis/SourceSwitch';
import { Notice } from '../components/Notice';
import { api, ApiFailure } from '../lib/api';
import { browserEngine } from '../lib/browser-engine';
import { objectBackendText } from '../lib/object-backend';
import { objectAnalyzer, placeFor } from '../lib/analyze';
import { EngineChoice } from '../components/analysis/EngineChoice';
import { OfflineOffer } from '../components/analysis/OfflineOffer';
import { drawObjects } from '../lib/overlay';

const MIN_CONFIDENCE = 0.1;
const MAX_CONFIDENCE = 0.9;
const DEFAULT_CONFIDENCE = 0.4;
/** How often to ask again while the detector loads, and while the server cannot be reached. */
const LOADING_POLL_MS = 1000;
const RETRY_MS = 2000;

function clampConfidence(c: number): number {
  return Math.min(MAX_CONFIDENCE, Math.max(MIN_CONFIDENCE, Math.round(c * 100) / 100));
}

export default function Objects() {
  const [source, setSource] = createSignal<Source>('camera');
  const [status, setStatus] = createSignal<ObjectStatusResponse | null>(null);
  const [statusError, setStatusError] = createSignal('');
  const [result, setResult] = createSignal<ObjectDetectionResponse | null>(null);
  const [error, setError] = createSignal<AnalysisFailure | null>(null);
  // The slider follows the server's default until it is moved; `committed` changes when it is let go.
  const [chosen, setChosen] = createSignal<number | null>(null);
  const [committed, setCommitted] = createSignal<number | null>(null);
  const confidence = () => chosen() ?? clampConfidence(status()?.confidence_threshold ?? DEFAULT_CONFIDENCE);

  let timer: ReturnType<typeof setTimeout> | undefined;
  let gone = false;
  const loadStatus = async () => {
    clearTimeout(timer);
    let again = 0;
    try {
      const s = await api.objectStatus();
      setStatus(s);
      setStatusError('');
      if (s.state === 'loading') again = LOADING_POLL_MS;
    } catch (err) {
      setStatusError(err instanceof ApiFailure ? err.message : String(err));
      again = RETRY_MS;
    }
    if (again && !gone) timer = setTimeout(() => void loadStatus(), again);
  };
  onMount(() => void loadStatus());
  onCleanup(() => {
    gone = true;
    clearTimeout(timer);
  });

  // In the browser the page needs nothing from the server's detector (an offline kiosk has no server).
  const inBrowser = () => placeFor('objects') === 'browser';
  const state = () => (inBrowser() ? 'ready' : status()?.state);
  // `not_loaded`: the server loads its detector for the first request (#38), which waits for it.
  const ready = () => state() === 'ready' || state() === 'not_loaded';

  const switchSource = (s: Source) => {
    setSource(s);
    setResult(null);
    setError(null);
  };

  // The analyzer is chosen at each frame: switching between browser and server applies at once.
  const analyze = (frame: HTMLCanvasElement, signal: AbortSignal) => objectAnalyzer().detect(frame, confidence(), signal);
  // In this browser two camera frames are detected at once (the engine spreads them over a lane per core,
  // engine/object-pool.ts); the server gets one request at a time.
  const depth = () => (objectAnalyzer().where === 'browser' ? 2 : 1);
  const draw = (overlay: HTMLCanvasElement, frame: HTMLCanvasElement, r: ObjectDetectionResponse) =>
    drawObjects(overlay, frame.width, frame.height, r.objects);
  const onResult = (r: ObjectDetectionResponse) => {
    setResult(r);
    setError(null);
  };
  const onError = (err: unknown) => {
    setError({ text: errorText(err), unreachable: isUnreachable(err) });
    // A 503 means the detector is not there (any more): find out why.
    if (err instanceof ApiFailure && err.status === 503) void loadStatus();
  };

  return (
    <section class="analysis-page">
      <h1>Object detection</h1>
      <p class="muted">Finds everyday objects (80 kinds: people, vehicles, animals, furniture, food…) and counts them.</p>

      <EngineChoice page="objects" />
      {/* Which backend detects now: WASM answers at once, WebGPU takes over once warm (engine/object-pool.ts). */}
      <Show when={inBrowser() && objectBackendText(browserEngine.objectBackend())}>
        {(text) => (
          <p class="muted small" data-testid="objects-backend" role="status">
            {text()}
          </p>
        )}
      </Show>
      <OfflineOffer page="objects" />
      <Switch>
        <Match when={inBrowser()}>{null}</Match>
        <Match when={statusError() && !status()}>
          <Notice kind="error" title="Cannot check the object detector" testId="objects-status-error">
            {statusError()} Trying again every 2 seconds.
          </Notice>
        </Match>
        <Match when={!status()}>
          <p role="status">Checking the object detector…</p>
        </Match>
        <Match when={state() === 'disabled'}>
          <Notice kind="warn" title="Object detection is switched off on this server" testId="objects-disabled">
            The server was started with <code>OBJECT_DETECTION_ENABLED=false</code>. Whoever runs it can switch it on and restart it; face
            recognition still works.
          </Notice>
        </Match>
        <Match when={state() === 'error'}>
          <Notice kind="error" title="The object detector could not be loaded" testId="objects-failed">
            {status()!.reason ?? 'The server did not say why.'} Check the server's log, then restart it.
          </Notice>
        </Match>
      </Switch>

      <Show when={ready() || state() === 'loading'}>
        <SourceSwitch name="objects-source" value={source()} onChange={switchSource} />

        <Show when={state() === 'loading'}>
          <Notice kind="info" title="The object detector is loading" testId="objects-loading">
            It loads in the background when the server starts, which takes a few seconds. Detection starts as soon as it is ready.
          </Notice>
        </Show>
        <Show when={error()}>
          {(e) => <AnalysisError error={e()} failedTitle="Detection failed" live={source() === 'camera'} hasResult={!!result()} />}
        </Show>

        <div class="grid-2 analysis-layout">
          <div class="analysis-main">
            <CameraOrPhoto
              source={source()}
              photoId="objects-photo"
              emptyText="Upload a photo to find the objects in it."
              rerunKey={committed()}
              onPhoto={() => {
                setResult(null);
                setError(null);
              }}
              cameraLabel="Camera picture with detected objects"
              facingMode="environment"
              ready={ready()}
              depth={depth}
              analyze={analyze}
              draw={draw}
              onResult={onResult}
              onError={onError}
            />
          </div>

          <div class="analysis-side-stack">
            <div class="card confidence-card">
              <label for="objects-confidence">Minimum confidence</label>
              <div class="row confidence-row">
                <input
                  id="objects-confidence"
                  type="range"
                  min={MIN_CONFIDENCE}
                  max={MAX_CONFIDENCE}
                  step="0.05"
                  value={confidence()}
                  aria-valuetext={`${Math.round(confidence() * 100)}%`}
                  onInput={(e) => setChosen(clampConfidence(Number(e.currentTarget.value)))}
                  onChange={(e) => setCommitted(clampConfidence(Number(e.currentTarget.value)))}
                />
                <output for="objects-confidence" data-testid="confidence-value">
                  {Math.round(confidence() * 100)}%
                </output>
              </div>
              <p class="muted small">Lower finds more objects, with more mistakes; higher keeps only the sure ones.</p>
            </div>
            <ObjectSummary objects={result()?.objects ?? null} />
          </div>
        </div>
      </Show>
    </section>
  );
}
