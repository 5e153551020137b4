/**
 * Deletes one stored photo (DELETE /api/images/{label}/{filename}): a bad shot goes without the person. Says what
 * happened next to the button, and what failed in words.
 */
import { createSignal, Show } from 'solid-js';
import type { ImageDeleteResponse } from '../../../../shared/api/index';
import { api, ApiFailure } from '../../lib/api';

export function DeleteImageButton(props: {
  label: string;
  filename: string;
  /** The accessible name: which photo ("Delete photo 2 of grace-hopper"). */
  name: string;
  /** With the server's answer; null when the photo was already gone (deleted elsewhere). */
  onDeleted: (r: ImageDeleteResponse | null) => void;
}) {
  const [busy, setBusy] = createSignal(false);
  const [error, setError] = createSignal('');
  const remove = async () => {
    setBusy(true);
    setError('');
    try {
      props.onDeleted(await api.deleteImage(props.label, props.filename));
    } catch (err) {
      // Already gone (another tab, another device): what the person wanted; the list is refreshed all the same.
      if (err instanceof ApiFailure && err.status === 404) props.onDeleted(null);
      else setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <button type="button" class="danger small" aria-label={props.name} disabled={busy()} onClick={() => void remove()}>
        {busy() ? 'Deleting…' : 'Delete'}
      </button>
      <Show when={error()}>
        <span class="training-field-error" role="alert">
          {error()}
        </span>
      </Show>
    </>
  );
}
