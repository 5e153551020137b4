/**
 * What Lookout found in the photo sent with a question, the same facts the language model was given: faces
 * with their labels, confidence and facial features (eyes, smile, eyeglasses), objects counted per class,
 * and the face detection method. Folded away by default (a <details>) so the conversation stays readable;
 * the photo inside shows the boxes.
 */
import { createEffect, For, Show } from 'solid-js';
import type { ChatAnalysis } from '../../../../shared/api/index';
import { featuresText } from '../../../../shared/chat/prompt';
import { candidateText, isKnown, nameText, reasonWords, toneOf } from '../../lib/face-words';
import { drawFaces, drawObjects } from '../../lib/overlay';
import type { Attachment } from './conversation';

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** Object classes with their counts, most frequent first. */
function countObjects(analysis: ChatAnalysis): [string, number][] {
  const counts = new Map<string, number>();
  for (const o of analysis.objects) counts.set(o.class_name, (counts.get(o.class_name) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
}

export function analysisSummary(analysis: ChatAnalysis): string {
  return `${plural(analysis.faces.length, 'face')}, ${plural(analysis.objects.length, 'object')}`;
}

export function AnalysisPanel(props: { analysis: ChatAnalysis; image?: Attachment }) {
  let faceCanvas: HTMLCanvasElement | undefined;
  let objectCanvas: HTMLCanvasElement | undefined;
  createEffect(() => {
    const img = props.image;
    if (!img || !faceCanvas || !objectCanvas) return;
    drawObjects(objectCanvas, img.width, img.height, props.analysis.objects);
    drawFaces(faceCanvas, img.width, img.height, props.analysis.faces);
  });
  const faces = () => [...props.analysis.faces].sort((a, b) => b.confidence - a.confidence);
  return (
    <details class="chat-analysis" data-testid="chat-analysis">
      <summary>What Lookout found in the photo ({analysisSummary(props.analysis)})</summary>
      <div class="chat-analysis-body">
        <Show when={props.image}>
          {(img) => (
            <div class="stage chat-analysis-stage">
              <img class="stage-media" src={img().dataUrl} alt="What Lookout analysed, with the boxes it found" />
              {/* biome-ignore lint/a11y/noAriaHiddenOnFocusable: a canvas without tabindex is not focusable (and these let pointer events through); the boxes are for the eye, the analysis is given in text below */}
              <canvas ref={objectCanvas} class="stage-overlay" aria-hidden="true" />
              {/* biome-ignore lint/a11y/noAriaHiddenOnFocusable: as above, a visual overlay only */}
              <canvas ref={faceCanvas} class="stage-overlay" aria-hidden="true" />
            </div>
          )}
        </Show>
        <div>
          {/* h2: the page has no other level under its h1 (axe heading-order). */}
          <h2>Faces</h2>
          <Show when={faces().length > 0} fallback={<p class="muted">No faces found.</p>}>
            <ul class="chat-analysis-list">
              <For each={faces()}>
                {(f) => (
                  <li>
                    <Show
                      when={isKnown(f)}
                      fallback={
                        <span>
                          Unknown person (not recognised)
                          <Show when={candidateText(f)}>{(nearest) => <>, {nearest()}</>}</Show>. {reasonWords(f)}
                        </span>
                      }
                    >
                      <strong classList={{ 'face-unsure-name': toneOf(f) === 'unsure' }}>{nameText(f)}</strong>, confidence{' '}
                      {Math.round(f.confidence)}%
                    </Show>
                    <Show when={f.features}>
                      {(features) => (
                        <span class="muted" data-testid="chat-face-features">
                          {' '}
                          ({featuresText(features())})
                        </span>
                      )}
                    </Show>
                  </li>
                )}
              </For>
            </ul>
          </Show>
          <h2>Objects</h2>
          <Show when={props.analysis.objects_unavailable}>{(why) => <p class="muted">Object detection could not run: {why()}</p>}</Show>
          <Show
            when={props.analysis.objects.length > 0}
            fallback={
              <Show when={!props.analysis.objects_unavailable}>
                <p class="muted">No objects found.</p>
              </Show>
            }
          >
            <ul class="chat-analysis-list">
              <For each={countObjects(props.analysis)}>
                {([name, n]) => (
                  <li>
                    <strong>{name}</strong> × {n}
                  </li>
                )}
              </For>
            </ul>
          </Show>
          <p class="muted">Face detection method: {props.analysis.detection_method}</p>
        </div>
      </div>
    </details>
  );
}
