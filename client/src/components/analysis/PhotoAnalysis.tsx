/**
 * An uploaded photo on an analysis page: the file picker, the photo with an overlay of the result, and a
 * line saying what is going on. The photo is analysed once it is chosen, again when `rerunKey` changes
 * (a new confidence, say) and when `ready` turns true (the detector finished loading). A newer analysis
 * aborts an older one, so only one request is ever in flight.
 */
import { createEffect, createSignal, on, onCleanup, Show } from 'solid-js';
import { limitSize } from '../../lib/analyze';
import { fileToCanvas } from '../../lib/images';

export interface PhotoAnalysisProps<T> {
  /** Prefix for element ids, unique on the page. */
  id: string;
  /** What the empty stage says, e.g. "Upload a photo to find the faces in it." */
  emptyText: string;
  ready?: boolean;
  rerunKey?: unknown;
  analyze: (frame: HTMLCanvasElement, signal: AbortSignal) => Promise<T>;
  draw: (overlay: HTMLCanvasElement, frame: HTMLCanvasElement, result: T) => void;
  onResult: (result: T, frame: HTMLCanvasElement) => void;
  onError: (err: unknown) => void;
  /** Called when a new photo is chosen, before it is analysed (the page clears the old result). */
  onPhoto?: () => void;
}

export function PhotoAnalysis<T>(props: PhotoAnalysisProps<T>) {
  const [photo, setPhoto] = createSignal<HTMLCanvasElement | null>(null);
  const [name, setName] = createSignal('');
  const [overlay, setOverlay] = createSignal<HTMLCanvasElement>();
  const [busy, setBusy] = createSignal(false);
  const [failed, setFailed] = createSignal(false);
  let controller: AbortController | null = null;
  onCleanup(() => controller?.abort());
  // The overlay's labels are sized for the photo as shown: drawn again when it is shown at another size (a phone
  // turned, a window resized).
  let drawn: { frame: HTMLCanvasElement; result: T } | null = null;
  const resized = new ResizeObserver(() => {
    const o = overlay();
    if (o && drawn && drawn.frame === photo()) props.draw(o, drawn.frame, drawn.result);
  });
  onCleanup(() => resized.disconnect());
  createEffect(() => {
    const o = overlay();
    resized.disconnect();
    if (o) resized.observe(o);
  });

  const analyze = async () => {
    const frame = photo();
    if (!frame || !(props.ready ?? true)) return;
    controller?.abort();
    const mine = new AbortController();
    controller = mine;
    setBusy(true);
    setFailed(false);
    try {
      const result = await props.analyze(frame, mine.signal);
      if (mine.signal.aborted) return;
      const o = overlay();
      drawn = { frame, result };
      if (o) props.draw(o, frame, result);
      props.onResult(result, frame);
    } catch (err) {
      if (mine.signal.aborted) return;
      setFailed(true);
      props.onError(err);
    } finally {
      if (controller === mine) {
        controller = null;
        setBusy(false);
      }
    }
  };

  createEffect(on([photo, () => props.ready ?? true, () => props.rerunKey], () => void analyze()));

  const choose = async (input: HTMLInputElement) => {
    const file = input.files?.[0];
    if (!file) return;
    controller?.abort();
    props.onPhoto?.();
    try {
      const canvas = limitSize(await fileToCanvas(file));
      canvas.className = 'stage-media analysis-photo';
      canvas.setAttribute('role', 'img');
      canvas.setAttribute('aria-label', `The photo ${file.name}`);
      setName(file.name);
      setPhoto(canvas);
    } catch (err) {
      setPhoto(null);
      setFailed(false);
      props.onError(err);
    }
  };

  return (
    <div class="photo-analysis">
      <div class="field photo-picker">
        <label for={`${props.id}-file`}>Upload a photo</label>
        <input id={`${props.id}-file`} type="file" accept="image/*" onChange={(e) => void choose(e.currentTarget)} />
      </div>
      <div class="stage">
        <Show
          when={photo()}
          keyed
          fallback={
            <div class="stage-empty">
              <p>{props.emptyText}</p>
            </div>
          }
        >
          {(canvas) => (
            <div class="analysis-frame">
              {canvas}
              {/* biome-ignore lint/a11y/noAriaHiddenOnFocusable: a canvas without tabindex is not focusable (and this one lets pointer events through); the boxes drawn on it are for the eye, the results are given in text */}
              <canvas ref={setOverlay} class="stage-overlay" aria-hidden="true" />
            </div>
          )}
        </Show>
      </div>
      <div class="row photo-status">
        <p role="status" class="muted">
          {busy() ? `Analysing ${name()}…` : photo() && !failed() ? `${name()} (${photo()!.width} x ${photo()!.height} px)` : ''}
        </p>
        <Show when={failed() && !busy()}>
          <button type="button" class="button secondary" onClick={() => void analyze()}>
            Try again
          </button>
        </Show>
      </div>
    </div>
  );
}
