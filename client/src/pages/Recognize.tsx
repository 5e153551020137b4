/**
 * Live recognition: the camera (or an uploaded photo) analysed frame after frame, each face boxed with who it
 * is and how sure the match is, the faces listed below, and for a group a grid of the faces cut out. It says
 * which detection method and recognition model answered and whether the model has been trained; when the
 * server cannot be reached the last result stays and the camera keeps asking every two seconds.
 */
import { createSignal, Show } from 'solid-js';
import type { DetectionMethod, RecognitionModel, RecognizeResponse } from '../../../shared/api/index';
import { CameraOrPhoto } from '../components/analysis/CameraOrPhoto';
import { AnalysisError, type AnalysisFailure } from '../components/analysis/AnalysisError';
import { EngineChoice } from '../components/analysis/EngineChoice';
import { OfflineOffer } from '../components/analysis/OfflineOffer';
import { errorText, isUnreachable } from '../components/analysis/errors';
import { FaceGrid, FaceList, GRID_MIN_FACES } from '../components/analysis/FaceResults';
import { SourceSwitch, type Source } from '../components/analysis/SourceSwitch';
import { Notice } from '../components/Notice';
import { faceAnalyzer, type Place } from '../lib/analyze';
import { drawFaces } from '../lib/overlay';
import { browserEngine } from '../lib/browser-engine';
import { A } from '@solidjs/router';
import { serverStatus } from '../lib/server-status';

const DETECTION_NAMES: Record<DetectionMethod, string> = {
  local: 'Local (Haar cascade)',
  remote: 'Remote (face detection model server)',
};

const MODEL_NAMES: Record<RecognitionModel, string> = {
  lbph: 'LBPH',
  embedding: 'Embedding (face descriptors)',
};

interface Shown {
  response: RecognizeResponse;
  /** The frame the response was computed from: the face cards are cut out of it. */
  frame: HTMLCanvasElement;
  /** Where it was analysed: the page's choice may have changed since. */
  where: Place;
}

export default function Recognize() {
  const [source, setSource] = createSignal<Source>('camera');
  const [shown, setShown] = createSignal<Shown | null>(null);
  const [error, setError] = createSignal<AnalysisFailure | null>(null);

  const switchSource = (s: Source) => {
    setSource(s);
    setShown(null);
    setError(null);
  };

  // The analyzer is chosen at each frame: switching between browser and server applies at once.
  const whereOf = new WeakMap<RecognizeResponse, Place>();
  const analyze = async (frame: HTMLCanvasElement, signal: AbortSignal) => {
    const analyzer = faceAnalyzer();
    const response = await analyzer.recognize(frame, signal);
    whereOf.set(response, analyzer.where);
    return response;
  };
  // In this browser the next camera frame is sent while one is analysed (the engine takes them back to back);
  // the server gets one request at a time.
  const depth = () => (faceAnalyzer().where === 'browser' ? 2 : 1);
  const draw = (overlay: HTMLCanvasElement, frame: HTMLCanvasElement, r: RecognizeResponse) =>
    drawFaces(overlay, frame.width, frame.height, r.faces);
  const onResult = (response: RecognizeResponse, frame: HTMLCanvasElement) => {
    setShown({ response, frame, where: whereOf.get(response) ?? faceAnalyzer().where });
    setError(null);
  };
  // The last result stays on screen: a failure only adds the message.
  const onError = (err: unknown) => setError({ text: errorText(err), unreachable: isUnreachable(err) });

  const faces = () => shown()?.response.faces ?? [];
  // The model trained in this browser (offline) that answers here, until the server's replaces it.
  const localModelInUse = () => ((shown()?.where ?? faceAnalyzer().where) === 'browser' ? browserEngine.localModel() : null);
  // The server's current state while it answers (a result from before a training must not keep "Not trained yet").
  const trained = () =>
    (serverStatus.reachable() ? serverStatus.ready()?.recognizer_trained : undefined) ??
    shown()?.response.trained ??
    serverStatus.ready()?.recognizer_trained ??
    null;
  const method = () => shown()?.response.detection_method ?? serverStatus.ready()?.detection_method;
  const model = () => shown()?.response.recognition_model ?? serverStatus.ready()?.recognition_model;

  const emptyText = () => {
    if (!shown()) return source() === 'camera' ? 'Waiting for the first analysed picture…' : 'No photo analysed yet.';
    return source() === 'camera'
      ? 'No face in view. Face the camera in good light, not too far away.'
      : 'No faces found in this photo. Faces should be frontal and not too small.';
  };

  return (
    <section class="analysis-page">
      <h1>Live recognition</h1>
      <p class="muted">Each face gets a box with who it is and how sure the match is. Use the camera, or upload a photo.</p>

      <SourceSwitch name="recognize-source" value={source()} onChange={switchSource} />

      <Show when={trained() === false && !localModelInUse()}>
        <Notice kind="warn" testId="not-trained">
          Not trained yet: every face is unknown. <A href="/training">Train on the Training page</A>.
        </Notice>
      </Show>
      <OfflineOffer page="recognize" />
      <Show when={error()}>
        {(e) => <AnalysisError error={e()} failedTitle="Recognition failed" live={source() === 'camera'} hasResult={!!shown()} />}
      </Show>

      <div class="grid-2 analysis-layout">
        <div class="analysis-main">
          <CameraOrPhoto
            source={source()}
            photoId="recognize-photo"
            emptyText="Upload a photo to see who is in it."
            onPhoto={() => {
              setShown(null);
              setError(null);
            }}
            cameraLabel="Camera picture with recognised faces"
            depth={depth}
            analyze={analyze}
            draw={draw}
            onResult={onResult}
            onError={onError}
          />

          <h2>
            Faces found <Show when={shown()}>({faces().length})</Show>
          </h2>
          <Show
            when={faces().length > 0}
            fallback={
              <p class="muted" data-testid="faces-empty">
                {emptyText()}
              </p>
            }
          >
            <FaceList faces={faces()} />
          </Show>
        </div>

        <aside class="card analysis-side" aria-label="About the recognition">
          <EngineChoice page="recognize" />
          <h2>How it was recognised</h2>
          <dl class="facts">
            <dt>Face detection</dt>
            <dd data-testid="detection-method">{method() ? (DETECTION_NAMES[method()!] ?? method()) : '…'}</dd>
            <dt>Recognition model</dt>
            <dd data-testid="recognition-model">{model() ? (MODEL_NAMES[model()!] ?? model()) : '…'}</dd>
            <dt>Model trained</dt>
            <dd>{trained() === null ? '…' : trained() ? 'Yes' : 'No'}</dd>
            <Show when={localModelInUse()}>
              {(m) => (
                <>
                  <dt>Trained in this browser</dt>
                  <dd data-testid="browser-model-in-use">{m().labels.join(', ')}: used on this device until the server learns them</dd>
                </>
              )}
            </Show>
            <dt>Analysed on</dt>
            <dd data-testid="analysed-on">
              {(shown()?.where ?? faceAnalyzer().where) === 'server' ? 'The Lookout server' : 'This device (in the browser)'}
            </dd>
          </dl>
          <p class="muted small">
            Recognition model and detection method are chosen on the <A href="/config">Models</A> page.
          </p>
        </aside>
      </div>

      <Show when={faces().length >= GRID_MIN_FACES}>
        <h2>Faces in the picture</h2>
        <FaceGrid faces={faces()} frame={shown()!.frame} />
      </Show>
    </section>
  );
}
