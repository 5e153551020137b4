/**
 * Chat: ask Lookout a question, optionally about a photo (a file or the camera). With a photo, the server
 * analyses it (faces, objects) and the language model answers from that analysis; the reply streams in.
 * The conversation is kept while moving between pages (components/chat/conversation.ts).
 */
import { createEffect, createSignal, For, on, onCleanup, onMount, Show } from 'solid-js';
import type { ChatStatusBody } from '../../../shared/api/index';
import { ChatMessage } from '../components/chat/ChatMessage';
import { ChatStatusNotice, composerOpen } from '../components/chat/ChatStatusNotice';
import { Composer } from '../components/chat/Composer';
import { conversation, newConversation } from '../components/chat/conversation';
import { api, ApiFailure } from '../lib/api';

/** How often the page asks again whether the language model answers. */
const STATUS_POLL_MS = 15_000;

export default function Chat() {
  const [status, setStatus] = createSignal<ChatStatusBody | null>(null);
  const [statusError, setStatusError] = createSignal('');
  let log: HTMLOListElement | undefined;

  const loadStatus = async () => {
    try {
      setStatus(await api.chatStatus());
      setStatusError('');
    } catch (err) {
      setStatusError(err instanceof ApiFailure ? err.message : String(err));
    }
  };
  onMount(() => {
    void loadStatus();
    const timer = setInterval(() => document.visibilityState === 'visible' && void loadStatus(), STATUS_POLL_MS);
    onCleanup(() => clearInterval(timer));
  });
  // A failed question may mean the endpoint went away: ask again so the notice says so.
  createEffect(on(conversation.busy, (busy, wasBusy) => wasBusy && !busy && void loadStatus(), { defer: true }));

  // Keep the newest text in view while a reply grows, unless the person scrolled up to read.
  let stick = true;
  const onScroll = () => {
    if (log) stick = log.scrollHeight - log.scrollTop - log.clientHeight < 48;
  };
  createEffect(() => {
    const turns = conversation.turns();
    const last = turns[turns.length - 1];
    void last?.text;
    void last?.state;
    void turns.length;
    if (log && stick) log.scrollTop = log.scrollHeight;
  });

  return (
    <section class="chat-page">
      <div class="chat-head">
        <h1>Chat</h1>
        <button
          type="button"
          class="secondary"
          onClick={() => {
            stick = true;
            newConversation();
          }}
          disabled={conversation.turns().length === 0}
        >
          New conversation
        </button>
      </div>
      <p class="muted chat-intro">
        Ask about a photo and Lookout describes the people and objects it finds in it. Each question is answered on its own: Lookout does
        not remember the earlier ones.
      </p>

      <ChatStatusNotice status={status()} error={statusError()} />

      <ol class="chat-log" ref={log} onScroll={onScroll} aria-label="Conversation" tabindex="0" data-testid="chat-log">
        <Show
          when={conversation.turns().length > 0}
          fallback={<li class="chat-empty muted">No messages yet. Write a question below, or attach a photo and ask what is in it.</li>}
        >
          <For each={conversation.turns()}>{(turn) => <ChatMessage turn={turn} />}</For>
        </Show>
      </ol>
      {/* Replies are announced once complete (announcing every streamed piece would be noise). */}
      <div class="chat-sr-only" role="status" aria-live="polite" aria-atomic="true" data-testid="chat-announcer">
        {conversation.announcement()}
      </div>

      <Composer disabled={!composerOpen(status(), statusError())} />
    </section>
  );
}
