/**
 * Whether chat can answer, from GET /api/chat/status: switched off, no language model configured (both stop
 * the composer), or configured but failing its last check (a warning: the question may still get through).
 */
import { Match, Switch } from 'solid-js';
import type { ChatStatusBody } from '../../../../shared/api/index';
import { ForOperators } from '../ForOperators';
import { Notice } from '../Notice';

function sentence(s: string): string {
  const t = s.trim();
  const c = t.charAt(0).toUpperCase() + t.slice(1);
  return /[.!?]$/.test(c) ? c : `${c}.`;
}

/**
 * Whether the question box takes a question: not while chat cannot answer, nor while that is still being asked (the
 * box was open, with Send greyed, before the status said there is no language model); yes when the status could not
 * be read (the question may still get through, and its answer says why not).
 */
export function composerOpen(s: ChatStatusBody | null, statusError: string): boolean {
  if (s === null) return statusError !== '';
  return s.enabled;
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
          Whoever runs this Lookout server can switch it on. The other pages work as usual.
          <ForOperators testId="chat-status-setup">
            Set <code>CHAT_ENABLED=true</code> and restart the server (docs/settings.md).
          </ForOperators>
        </Notice>
      </Match>
      <Match when={props.status && !props.status.endpoint_configured}>
        <Notice kind="warn" title="Chat has no language model to write its replies" testId="chat-status">
          Questions cannot be asked until whoever runs this Lookout server connects one. The other pages work as usual.
          <ForOperators testId="chat-status-setup">
            Set <code>CHAT_ENDPOINT</code> to an OpenAI-compatible server's address, or <code>CHAT_MODEL_PATH</code> to a GGUF model file,
            and restart the server (docs/settings.md).
          </ForOperators>
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
