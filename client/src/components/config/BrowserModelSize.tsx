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
      // The index first: with nothing trained (or not for this account) the compact manifest is not asked for at
      // all. Asked beside it, its 404 on a first visit never finished in Chromium, so the page never went idle.
      const i = await authFetch('/api/models/trained');
      if (i.status !== 200) return void i.body?.cancel();
      const index = (await i.json()) as TrainedModelsResponse;
      if (!index.version) return;
      const m = await authFetch('/api/models/trained/compact');
      if (m.status !== 200) return void m.body?.cancel();
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
