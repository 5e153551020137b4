/**
 * Safety (PPE compliance): the camera checked every 1, 2 or 5 seconds (or an uploaded photo) for the protective
 * equipment each person must wear. Each person gets a box in the colour of their verdict with what they miss,
 * a banner gives the verdict of the frame, the LLM's note on a violation shows when the server wrote one, and
 * the history of checks is charted (Chart.js, loaded with the charts only). The history is read from the server
 * every 10 seconds and each new check is added as it comes. The page says plainly when the server has PPE
 * checks switched off, has no detector configured, or cannot reach it (then nothing is sent).
 */
import { createMemo, createSignal, Match, onCleanup, onMount, Show, Switch } from 'solid-js';
import type { PpeDetectResponse, PpeStatusResponse } from '../../../shared/api/index';
import { ApiDownload } from '../auth/ApiDownload';
import { auth } from '../auth/session';
import { errorText, isUnreachable } from '../components/analysis/errors';
import { PhotoAnalysis } from '../components/analysis/PhotoAnalysis';
import { type Source, SourceSwitch } from '../components/analysis/SourceSwitch';
import { ForOperators } from '../components/ForOperators';
import { Notice } from '../components/Notice';
import { INTERVALS_MS, IntervalChoice } from '../components/safety/IntervalChoice';
import { SafetyBanner } from '../components/safety/SafetyBanner';
import { SafetyCamera } from '../components/safety/SafetyCamera';
import { SafetyCharts } from '../components/safety/SafetyCharts';
import { SafetyNote, SafetySummary } from '../components/safety/SafetySummary';
import { ApiFailure, api } from '../lib/api';
import { canvasToDataUrl } from '../lib/images';
import { appendCheck, checkFromRecord, checkFromResponse, HISTORY_LIMIT, mergeChecks, type PpeCheck } from '../lib/ppe-history';
import { drawPpe } from '../lib/ppe-overlay';

/** The status and the history are read again this often; the status sooner while checks cannot run. */
const REFRESH_MS = 10_000;
const NOT_READY_MS = 3000;
const INTERVAL_KEY = 'lookout.safety.interval';
const DEFAULT_INTERVAL_MS = 2000;

/** A reason from the server as a sentence: "the detector is unreachable" -> "The detector is unreachable." */
function sentence(text: string): string {
  const t = text.trim().replace(/^./, (c) => c.toUpperCase());
  return /[.!?]$/.test(t) ? t : `${t}.`;
}

function savedInterval(): number {
  const v = Number(localStorage.getItem(INTERVAL_KEY));
  return (INTERVALS_MS as readonly number[]).includes(v) ? v : DEFAULT_INTERVAL_MS;
}

type Phase = 'loading' | 'server_unreachable' | 'disabled' | 'not_configured' | 'checking' | 'unreachable' | 'ready';

export default function Safety() {
  const [source, setSource] = createSignal<Source>('camera');
  const [intervalMs, setIntervalMs] = createSignal(savedInterval());
  const [status, setStatus] = createSignal<PpeStatusResponse | null>(null);
  const [statusError, setStatusError] = createSignal('');
  const [result, setResult] = createSignal<PpeDetectResponse | null>(null);
  const [error, setError] = createSignal('');
  const [errorUnreachable, setErrorUnreachable] = createSignal(false);
  const [checks, setChecks] = createSignal<PpeCheck[]>([]);
  const [historyError, setHistoryError] = createSignal('');
  const [photoChosen, setPhotoChosen] = createSignal(false);
  const [checkAgain, setCheckAgain] = createSignal(0);

  // Memos: the status is read again every few seconds, and the camera and photo react only to a real change.
  const phase = createMemo((): Phase => {
    const s = status();
    if (!s) return statusError() ? 'server_unreachable' : 'loading';
    if (!s.enabled) return 'disabled';
    if (!s.endpoint) return 'not_configured';
    if (!s.reachable) return s.checked_at ? 'unreachable' : 'checking';
    return 'ready';
  });
  const ready = createMemo(() => phase() === 'ready');
  const enabled = createMemo(() => status()?.enabled === true && !!status()?.endpoint);

  let timer: ReturnType<typeof setTimeout> | undefined;
  let gone = false;
  let history: AbortController | null = null;

  const loadHistory = async () => {
    history?.abort();
    const mine = new AbortController();
    history = mine;
    try {
      const { events } = await api.ppeEvents(HISTORY_LIMIT, mine.signal);
      if (mine.signal.aborted) return;
      setChecks((current) => mergeChecks(current, events.map(checkFromRecord)));
      setHistoryError('');
    } catch (err) {
      if (!mine.signal.aborted) setHistoryError(errorText(err));
    }
  };

  const refresh = async () => {
    clearTimeout(timer);
    try {
      setStatus(await api.ppeStatus());
      setStatusError('');
    } catch (err) {
      setStatusError(errorText(err));
    }
    if (enabled()) await loadHistory();
    if (!gone) timer = setTimeout(() => void refresh(), ready() ? REFRESH_MS : NOT_READY_MS);
  };
  onMount(() => void refresh());

  // Each check adds a frame to the training set: its count is read again shortly after a check (at most once a second).
  let countTimer: ReturnType<typeof setTimeout> | undefined;
  const recountSoon = () => {
    if (countTimer !== undefined || !status()?.dataset.enabled) return;
    countTimer = setTimeout(() => {
      countTimer = undefined;
      api.ppeStatus().then(
        (s) => !gone && setStatus(s),
        () => undefined,
      );
    }, 1000);
  };

  onCleanup(() => {
    gone = true;
    clearTimeout(timer);
    clearTimeout(countTimer);
    history?.abort();
  });

  const switchSource = (s: Source) => {
    setSource(s);
    setResult(null);
    setError('');
    setPhotoChosen(false);
  };
  const chooseInterval = (ms: number) => {
    localStorage.setItem(INTERVAL_KEY, String(ms));
    setIntervalMs(ms);
  };

  const analyze = (frame: HTMLCanvasElement, signal: AbortSignal) => api.ppeDetect(canvasToDataUrl(frame), undefined, signal);
  const draw = (overlay: HTMLCanvasElement, frame: HTMLCanvasElement, r: PpeDetectResponse) =>
    drawPpe(overlay, frame.width, frame.height, r);
  const onResult = (r: PpeDetectResponse) => {
    setResult(r);
    setError('');
    // The new check goes straight into the charts; the next refresh brings the server's copy of it.
    setChecks((current) => appendCheck(current, checkFromResponse(r)));
    recountSoon();
  };
  const onError = (err: unknown) => {
    setError(errorText(err));
    setErrorUnreachable(isUnreachable(err));
    // 503: PPE is off, not configured, or the detector went away: the status says which.
    if (err instanceof ApiFailure && err.status === 503) void refresh();
  };

  const waitingText = () => {
    if (!ready()) return 'No checks are made until the PPE detector can be reached.';
    return source() === 'camera' ? 'Waiting for the first check…' : 'Upload a photo to check it.';
  };

  return (
    <section class="analysis-page safety-page">
      <h1>Safety</h1>
      <p class="muted">
        Checks, person by person, that everyone in view wears the required protective equipment
        <Show when={status()?.expected.length}> ({status()!.expected.join(', ')})</Show>.
      </p>

      <Switch>
        <Match when={phase() === 'server_unreachable'}>
          <Notice kind="error" title="Cannot check the safety service" testId="safety-status-error">
            {statusError()} Trying again every few seconds.
          </Notice>
        </Match>
        <Match when={phase() === 'loading'}>
          <p role="status">Checking the PPE detector…</p>
        </Match>
        <Match when={phase() === 'disabled'}>
          <Notice kind="warn" title="PPE checks are switched off on this server" testId="safety-disabled">
            Protective-equipment checks are not part of this Lookout server's set-up; whoever runs it can switch them on.
            <ForOperators testId="safety-setup">
              The server was started with <code>PPE_ENABLED=false</code> (the default). Set <code>PPE_ENABLED=true</code> and{' '}
              <code>PPE_ENDPOINT</code> to the PPE detector's address, then restart it.
            </ForOperators>
          </Notice>
        </Match>
        <Match when={phase() === 'not_configured'}>
          <Notice kind="warn" title="No PPE detector is configured" testId="safety-not-configured">
            PPE checks are on, but the server has no detector to send pictures to. Whoever runs it can connect one.
            <ForOperators testId="safety-setup">
              <code>PPE_ENDPOINT</code> is not set: set it to the PPE detector's address (for example <code>npm run ppe-server</code> on{' '}
              <code>http://127.0.0.1:9100</code>), then restart the server.
            </ForOperators>
          </Notice>
        </Match>
        <Match when={phase() === 'checking'}>
          <Notice kind="info" title="Checking the PPE detector" testId="safety-checking">
            The server is checking whether the detector at <code>{status()!.endpoint}</code> answers. Checks start as soon as it does.
          </Notice>
        </Match>
        <Match when={phase() === 'unreachable'}>
          <Notice kind="error" title="The PPE detector cannot be reached" testId="safety-unreachable">
            {sentence(status()!.reason ?? 'The detector did not answer its health check.')}
            <Show when={!status()!.reason?.includes(status()!.endpoint!)}>
              {' '}
              The server asked <code>{status()!.endpoint}</code>.
            </Show>{' '}
            No pictures are sent until it answers; this page checks again every few seconds.
          </Notice>
        </Match>
      </Switch>

      <Show when={enabled()}>
        <div class="row safety-controls">
          <SourceSwitch name="safety-source" value={source()} onChange={switchSource} />
          <Show when={source() === 'camera'}>
            <IntervalChoice value={intervalMs()} onChange={chooseInterval} />
          </Show>
        </div>

        <SafetyBanner result={result()} waitingText={waitingText()} />
        <Show when={error()}>
          <Notice kind="error" title={errorUnreachable() ? 'Waiting for the server' : 'The check failed'} testId="analysis-error">
            {error()}
            <Show when={source() === 'camera'}> {result() ? 'The last result stays on screen; ' : ''}the camera keeps trying.</Show>
          </Notice>
        </Show>

        <div class="grid-2 analysis-layout">
          <div class="analysis-main">
            <Show
              when={source() === 'camera'}
              fallback={
                <>
                  <PhotoAnalysis
                    id="safety-photo"
                    emptyText="Upload a photo to check who wears the required protective equipment."
                    ready={ready()}
                    rerunKey={checkAgain()}
                    analyze={analyze}
                    draw={draw}
                    onResult={onResult}
                    onError={onError}
                    onPhoto={() => {
                      setPhotoChosen(true);
                      setResult(null);
                      setError('');
                    }}
                  />
                  <button
                    type="button"
                    class="button secondary safety-check-again"
                    disabled={!photoChosen() || !ready()}
                    onClick={() => setCheckAgain((n) => n + 1)}
                  >
                    Check the photo again
                  </button>
                </>
              }
            >
              <SafetyCamera
                label="Camera picture with the PPE check of each person"
                intervalMs={intervalMs()}
                ready={ready()}
                analyze={analyze}
                draw={draw}
                onResult={onResult}
                onError={onError}
              />
            </Show>
            <p class="muted small safety-legend">
              <span>
                <span class="swatch safety-swatch-ok" aria-hidden="true" /> compliant
              </span>
              <span>
                <span class="swatch safety-swatch-violation" aria-hidden="true" /> missing PPE
              </span>
              <span>
                <span class="swatch safety-swatch-item" aria-hidden="true" /> protective item found (thin box)
              </span>
              <span>
                <span class="swatch safety-swatch-absent" aria-hidden="true" /> item shown missing (dashed)
              </span>
            </p>
          </div>

          <div class="analysis-side-stack">
            <SafetySummary result={result()} expected={status()?.expected ?? []} />
            <SafetyNote text={result()?.llm_analysis} />
            <Show when={status()?.dataset.enabled && (!auth.enabled() || auth.isAdmin())}>
              <section class="card safety-dataset" aria-labelledby="safety-dataset-title">
                <h2 id="safety-dataset-title">Training data</h2>
                <p id="safety-dataset-count" data-testid="dataset-count">
                  {status()!.dataset.images === 0
                    ? 'No frames kept yet: each check adds its picture, with YOLO labels.'
                    : `${status()!.dataset.images} ${status()!.dataset.images === 1 ? 'image' : 'images'} checked so far, with YOLO labels.`}
                </p>
                <ApiDownload
                  class="button secondary"
                  href={api.ppeDatasetUrl()}
                  filename="ppe-dataset.zip"
                  aria-describedby="safety-dataset-count"
                  data-testid="dataset-download"
                >
                  Download training set (zip)
                </ApiDownload>
              </section>
            </Show>
          </div>
        </div>

        <SafetyCharts checks={checks()} expected={status()?.expected ?? []} error={historyError()} />
      </Show>
    </section>
  );
}
