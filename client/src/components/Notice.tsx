/** A message box: errors are announced to screen readers at once, the rest politely. */
import type { JSX } from 'solid-js';
import { Show } from 'solid-js';

export type NoticeKind = 'error' | 'warn' | 'info' | 'ok';

export function Notice(props: { kind: NoticeKind; title?: string; children?: JSX.Element; testId?: string }) {
  return (
    <div class={`notice notice-${props.kind}`} role={props.kind === 'error' ? 'alert' : 'status'} data-testid={props.testId}>
      <Show when={props.title}>
        <strong class="notice-title">{props.title}</strong>
      </Show>
      <div>{props.children}</div>
    </div>
  );
}
