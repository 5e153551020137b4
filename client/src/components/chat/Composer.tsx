/**
 * Writing a question: a text box (Enter sends, Shift+Enter starts a new line), a photo from a file or from the
 * camera shown as a thumbnail that can be removed, and Send, which becomes Stop while Lookout answers.
 */
import { createSignal, Show } from 'solid-js';
import { Notice } from '../Notice';
import { attachmentFromFile } from './attachment';
import { ChatCamera } from './ChatCamera';
import { conversation, PHOTO_ONLY_QUESTION, sendQuestion, stopReply, type Attachment } from './conversation';

export function Composer(props: { disabled: boolean }) {
  const [useCamera, setUseCamera] = createSignal(false);
  const [fileError, setFileError] = createSignal('');
  const [reading, setReading] = createSignal(false);
  let input: HTMLTextAreaElement | undefined;

  const canSend = () =>
    !props.disabled && !conversation.busy() && !reading() && (conversation.draft().trim() !== '' || conversation.attachment() !== null);

  const send = () => {
    if (!canSend()) return;
    const text = conversation.draft();
    const photo = conversation.attachment();
    conversation.setDraft('');
    conversation.setAttachment(null);
    void sendQuestion(text, photo);
    input?.focus();
  };

  const attach = (a: Attachment) => {
    setFileError('');
    conversation.setAttachment(a);
  };

  const onFile = async (e: Event & { currentTarget: HTMLInputElement }) => {
    const file = e.currentTarget.files?.[0];
    // Cleared so choosing the same file again fires another change.
    e.currentTarget.value = '';
    if (!file) return;
    setReading(true);
    try {
      attach(await attachmentFromFile(file));
    } catch (err) {
      setFileError(err instanceof Error ? err.message : String(err));
    } finally {
      setReading(false);
    }
  };

  const onKeyDown = (e: KeyboardEvent) => {
    // Enter while an input method is composing a character belongs to the input method.
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      send();
    }
  };

  return (
    <form
      class="chat-composer card"
      aria-label="Ask Lookout"
      onSubmit={(e) => {
        e.preventDefault();
        send();
      }}
    >
      <div class="field">
        <label for="chat-input">Your question</label>
        <textarea
          id="chat-input"
          ref={input}
          rows={3}
          placeholder={
            props.disabled
              ? 'Chat cannot take questions now (see above)'
              : conversation.attachment()
                ? PHOTO_ONLY_QUESTION
                : 'Ask Lookout about a photo, or anything else…'
          }
          aria-describedby="chat-input-help"
          value={conversation.draft()}
          onInput={(e) => conversation.setDraft(e.currentTarget.value)}
          onKeyDown={onKeyDown}
          disabled={props.disabled}
        />
        <span id="chat-input-help" class="muted chat-help">
          Enter sends, Shift+Enter starts a new line.
        </span>
      </div>

      <Show when={conversation.attachment()}>
        {(a) => (
          <figure class="chat-attachment" data-testid="chat-attachment">
            <img
              src={a().dataUrl}
              alt={a().source === 'camera' ? 'Photo from the camera, to send' : `Photo to send: ${a().name ?? 'chosen file'}`}
            />
            <figcaption>
              <span>{a().source === 'camera' ? 'Photo from the camera' : (a().name ?? 'Photo')}</span>
              <button type="button" class="secondary" onClick={() => conversation.setAttachment(null)} aria-label="Remove the photo">
                Remove
              </button>
            </figcaption>
          </figure>
        )}
      </Show>
      <Show when={reading()}>
        <p role="status" class="muted">
          Reading the photo…
        </p>
      </Show>
      <Show when={fileError()}>
        <Notice kind="error">{fileError()}</Notice>
      </Show>

      <Show when={useCamera() && !props.disabled}>
        <ChatCamera onPhoto={attach} disabled={conversation.busy()} />
      </Show>

      <div class="row chat-actions">
        <input
          id="chat-file"
          class="chat-sr-only chat-file-input"
          type="file"
          accept="image/*"
          onChange={onFile}
          disabled={props.disabled}
        />
        <label for="chat-file" class="button secondary chat-file-label" classList={{ disabled: props.disabled }}>
          Attach photo
        </label>
        <button
          type="button"
          class="secondary"
          aria-pressed={useCamera()}
          onClick={() => setUseCamera(!useCamera())}
          disabled={props.disabled}
        >
          Use camera
        </button>
        <Show
          when={conversation.busy()}
          fallback={
            <button type="submit" class="chat-send" disabled={!canSend()}>
              Send
            </button>
          }
        >
          <button type="button" class="danger chat-send" onClick={stopReply}>
            Stop
          </button>
        </Show>
      </div>
    </form>
  );
}
