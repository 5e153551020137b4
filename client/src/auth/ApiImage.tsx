/**
 * An image from the API (a stored training photo). `<img src>` cannot send a bearer token, so under auth the
 * image is fetched with the token and shown from a blob URL (revoked when the image goes); with auth off it is a
 * plain `<img src>`, as before (lazy loading, the browser's cache).
 */
import { createEffect, createSignal, onCleanup, Show } from 'solid-js';
import { auth, authFetch } from './session';

export function ApiImage(props: { src: string; alt: string; title?: string; loading?: 'lazy' | 'eager'; class?: string }) {
  const [blobUrl, setBlobUrl] = createSignal<string | null>(null);
  createEffect(() => {
    if (!auth.enabled()) return;
    const src = props.src;
    let url: string | null = null;
    let gone = false;
    void authFetch(src)
      .then(async (res) => {
        if (!res.ok || gone) return;
        url = URL.createObjectURL(await res.blob());
        if (gone) URL.revokeObjectURL(url);
        else setBlobUrl(url);
      })
      .catch(() => undefined);
    onCleanup(() => {
      gone = true;
      if (url) URL.revokeObjectURL(url);
      setBlobUrl(null);
    });
  });
  return (
    <Show
      when={auth.enabled()}
      fallback={<img src={props.src} alt={props.alt} title={props.title} loading={props.loading} class={props.class} />}
    >
      <img src={blobUrl() ?? undefined} alt={props.alt} title={props.title} class={props.class} />
    </Show>
  );
}
