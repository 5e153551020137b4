/**
 * A download from the API (the PPE training set). A plain `<a href download>` cannot send a bearer token, so
 * under auth a click fetches the file with the token and saves it from a blob URL; with auth off it is the plain
 * link, as before (the browser streams the download itself).
 */
import { createSignal, type JSX, Show } from 'solid-js';
import { auth, authFetch } from './session';

export function ApiDownload(props: {
  href: string;
  filename: string;
  class?: string;
  'aria-describedby'?: string;
  'data-testid'?: string;
  children: JSX.Element;
}) {
  const [busy, setBusy] = createSignal(false);
  const [problem, setProblem] = createSignal<string | null>(null);

  const save = async (event: MouseEvent) => {
    if (!auth.enabled()) return; // the plain link does it
    event.preventDefault();
    if (busy()) return;
    setBusy(true);
    setProblem(null);
    try {
      const res = await authFetch(props.href);
      if (!res.ok) {
        setProblem(res.status === 403 ? 'Only an administrator can download this.' : `The download failed (HTTP ${res.status}).`);
        return;
      }
      const url = URL.createObjectURL(await res.blob());
      const link = document.createElement('a');
      link.href = url;
      link.download = props.filename;
      link.click();
      // The click has handed the blob to the download manager; revoking later keeps slow browsers safe.
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
    } catch {
      setProblem('The download failed: the server could not be reached.');
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <a
        class={props.class}
        href={props.href}
        download={props.filename}
        aria-describedby={props['aria-describedby']}
        aria-busy={busy()}
        data-testid={props['data-testid']}
        onClick={save}
      >
        {props.children}
      </a>
      <Show when={problem()}>
        <p class="error" role="alert">
          {problem()}
        </p>
      </Show>
    </>
  );
}
