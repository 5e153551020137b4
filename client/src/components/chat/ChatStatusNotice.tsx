/**
 * Whether chat can answer, from GET /api/chat/status: switched off, no language model configured (both stop
 * the composer), or configured but failing its last check (a warning: the question may still get through).
 */
import { Match, Switch } from 'solid-js';
import type { ChatStatusBody } from '../../../../shared/api/index';
import { Notice } from '../Notice';

function sentence(s: string): string {
  const t = s.trim();
  const c = t.charAt(0).toUpperCase() + t.slice(1);
  return /[.!?]$/.test(c) ? c : `${c}.`;
}

/** Chat cannot be used at all with this status (the server would refuse every question). */
export function chatUnusable(s: ChatStatusBody | null): boolean {
  return s !== null && !s.enabled;
}

export function ChatStatusNotice(props: { status: ChatStatusBody | null; error: string }) {
  return (
    <Switch>
      <Match when={props.error}>
        <Notice kind="warn" title="Could not check whether chat is available" testId="chat-status">
          {props.error} You can still try sending a question.
        </Notice>
      </Match>
      <Match when={props.status === null}>
        <p class="muted" role="status">
          Checking whether chat is available…
        </p>
      </Match>
      <Match when={props.status && !props.status.switched_on}>
        <Notice kind="info" title="Chat is switched off on this server" testId="chat-status">
          Whoever runs this Lookout server can switch it on (CHAT_ENABLED=true). The other pages work as usual.
        </Notice>
      </Match>
      <Match when={props.status && !props.status.endpoint_configured}>
        <Notice kind="warn" title="No language model is configured (set CHAT_ENDPOINT or CHAT_MODEL_PATH)" testId="chat-status">
          Chat needs a language model to write its replies. Whoever runs this Lookout server can point it at one.
        </Notice>
      </Match>
      <Match when={props.status && !props.status.reachable && props.status.checked_at === null}>
        <p class="muted" role="status" data-testid="chat-status">
          Checking the language model…
        </p>
      </Match>
      <Match when={props.status && !props.status.reachable}>
        <Notice kind="warn" title="The language model did not answer its last check" testId="chat-status">
          {sentence(props.status!.reason ?? 'No reason was given')} You can still try sending a question.
        </Notice>
      </Match>
      <Match when={props.status}>
        {(s) => (
          <p class="muted chat-model" data-testid="chat-status">
            Replies are written by {s().model ? <strong>{s().model}</strong> : 'the language model'}
            {s().endpoint ? <> at {s().endpoint}</> : null}.
          </p>
        )}
      </Match>
    </Switch>
  );
}
