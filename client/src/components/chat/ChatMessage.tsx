/** One turn of the conversation: the person's question (with its photo) or Lookout's reply as it grows. */
import { Match, Show, Switch } from 'solid-js';
import { AnalysisPanel } from './AnalysisPanel';
import type { ChatTurn } from './conversation';

export function ChatMessage(props: { turn: ChatTurn }) {
  const t = () => props.turn;
  const mine = () => t().role === 'user';
  return (
    <li
      class="chat-turn"
      classList={{ 'chat-turn-user': mine(), 'chat-turn-assistant': !mine(), 'chat-turn-error': t().state === 'error' }}
      data-testid={mine() ? 'chat-user-message' : 'chat-reply'}
      data-state={t().state}
      aria-busy={t().state === 'thinking' || t().state === 'streaming'}
    >
      <span class="chat-role">{mine() ? 'You' : 'Lookout'}</span>
      <Show when={mine() && t().image}>
        {(img) => (
          <img
            class="chat-photo"
            src={img().dataUrl}
            alt={img().source === 'camera' ? 'Photo from the camera' : `Photo ${img().name ?? ''}`.trim()}
          />
        )}
      </Show>
      <Show when={!mine() && t().analysis}>{(a) => <AnalysisPanel analysis={a()} image={t().analysedImage} />}</Show>
      <Show when={t().text}>
        <p class="chat-text">{t().text}</p>
      </Show>
      <Switch>
        <Match when={t().state === 'thinking'}>
          <p class="chat-thinking">
            <span class="chat-dots" aria-hidden="true" />
            {t().analysedImage ? 'Looking at the photo and thinking…' : 'Thinking…'}
          </p>
        </Match>
        <Match when={t().state === 'stopped'}>
          <p class="muted chat-note">{t().text ? 'Stopped before the reply was complete.' : 'Stopped before Lookout answered.'}</p>
        </Match>
        <Match when={t().state === 'error' && t().error}>
          {(e) => (
            <div class="chat-error">
              <strong>{e().title}</strong> {e().message}
            </div>
          )}
        </Match>
      </Switch>
    </li>
  );
}
