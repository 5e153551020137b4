/**
 * The size of the trained models a browser downloads to recognise on its own (#27): the compact model
 * (GET /api/models/trained/compact: per-person segments, gzip on the wire) beside the files it replaces (OpenCV's
 * training.yml and embeddings.json, GET /api/models/trained). Only for accounts that may download them (kiosks,
 * devices, administrators); otherwise nothing is shown.
 */
import { createSignal, onMount, Show } from 'solid-js';
import type { CompactModelManifest, TrainedModelsResponse } from '../../../../shared/api/index';
import { type BrowserModelFigures, browserModelFigures, line } from './browser-model';
import { authFetch } from '../../auth/session';

export function BrowserModelSize() {
  const [figures, setFigures] = createSignal<BrowserModelFigures | null>(null);
  onMount(async () => {
    try {
      const [m, i] = await Promise.all([authFetch('/api/models/trained/compact'), authFetch('/api/models/trained')]);
      if (m.status !== 200) return; // not trained, or not for this account
      const index = i.status === 200 ? ((await i.json()) as TrainedModelsResponse) : null;
      setFigures(browserModelFigures((await m.json()) as CompactModelManifest, index));
    } catch {
      // The size is a detail: the page works without it.
    }
  });
  return (
    <Show when={figures()}>
      {(f) => (
        <section class="browser-model" aria-labelledby="browser-model-heading" data-testid="browser-model-size">
          <h2 id="browser-model-heading">The model browsers download</h2>
          <p class="muted">
            Kiosks and browsers that recognise on their own download the trained models of {f().people}{' '}
            {f().people === 1 ? 'person' : 'people'} in compact form, and after a training only the people who changed.
          </p>
          <ul class="muted small">
            <Show when={f().lbph}>{(l) => <li data-testid="browser-model-lbph">{line('LBPH', l())}</li>}</Show>
            <Show when={f().embedding}>{(e) => <li data-testid="browser-model-embedding">{line('Face embedding', e())}</li>}</Show>
          </ul>
        </section>
      )}
    </Show>
  );
}
