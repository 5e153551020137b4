/**
 * The conversation, kept at module level so it survives switching pages inside the app (the Chat page
 * unmounts, this does not). The server's chat is stateless: each question goes out alone, with its own photo.
 * A reply streams in as server-sent events: `analysis` first, then `delta` pieces, then `done` or `error`.
 */
import { createSignal } from 'solid-js';
import { createStore, produce } from 'solid-js/store';
import type { ChatAnalysis } from '../../../../shared/api/index';
import { ERROR_CODES } from '../../../../shared/api/errors';
import { ApiFailure } from '../../lib/api';
import { chatStream, type ChatStreamEvent } from '../../lib/chat-stream';

/** A photo ready to send: a JPEG data URL and its pixel size (the analysis boxes are in these pixels). */
export interface Attachment {
  dataUrl: string;
  width: number;
  height: number;
  /** Where it came from, for the thumbnail's description. */
  source: 'file' | 'camera';
  name?: string;
}

export type TurnState = 'thinking' | 'streaming' | 'done' | 'stopped' | 'error';

export interface ChatTurn {
  id: number;
  role: 'user' | 'assistant';
  text: string;
  image?: Attachment;
  /** Lookout's reply only: the analysis the server made of the question's photo (null without a photo). */
  analysis?: ChatAnalysis | null;
  /** The photo the analysis is about, so its boxes can be drawn over it. */
  analysedImage?: Attachment;
  state: TurnState;
  error?: { title: string; message: string };
}

/** Sent when a person attaches a photo and types nothing. */
export const PHOTO_ONLY_QUESTION = 'What do you see in this photo?';

const [store, setStore] = createStore<{ turns: ChatTurn[] }>({ turns: [] });
const [busy, setBusy] = createSignal(false);
const [announcement, setAnnouncement] = createSignal('');
/** The composer's draft and photo live here too, so a half-written question survives a page switch. */
const [draft, setDraft] = createSignal('');
const [attachment, setAttachment] = createSignal<Attachment | null>(null);
let controller: AbortController | null = null;
let nextId = 1;

export const conversation = {
  turns: () => store.turns,
  /** A question is on its way or its reply is still streaming. */
  busy,
  /** What the page's live region reads out (the finished reply, or what went wrong). */
  announcement,
  draft,
  setDraft,
  attachment,
  setAttachment,
};

/** A headline in plain words for each way a question can fail; ApiFailure.message adds the details. */
export function describeFailure(status: number, code: string): string {
  if (status === 0) return 'Lookout cannot be reached.';
  switch (code) {
    case 'chat_disabled':
      return 'Chat is switched off on this server.';
    case 'chat_not_configured':
      return 'No language model is configured.';
    case 'llm_busy':
      return 'The language model is busy.';
    case 'llm_timeout':
      return 'The language model took too long to answer.';
    case 'llm_bad_gateway':
      return 'The language model sent an answer Lookout could not use.';
    case 'llm_unavailable':
      return 'The language model cannot be reached.';
    case 'image_too_large':
    case 'payload_too_large':
      return 'The photo is too large.';
    case 'invalid_image':
    case 'unsupported_media_type':
      return 'The photo could not be read.';
  }
  if (status === 429) return 'The language model is busy.';
  if (status === 504) return 'The language model took too long to answer.';
  if (status === 502) return 'The language model sent an answer Lookout could not use.';
  if (status === 503) return 'Chat is not available right now.';
  if (status >= 400 && status < 500) return 'Lookout could not use this question.';
  return 'Lookout could not answer.';
}

function sentence(s: string): string {
  const t = s.trim();
  if (!t) return t;
  const c = t.charAt(0).toUpperCase() + t.slice(1);
  return /[.!?]$/.test(c) ? c : `${c}.`;
}

function update(id: number, fn: (turn: ChatTurn) => void): void {
  setStore(
    'turns',
    produce((turns) => {
      const t = turns.find((x) => x.id === id);
      if (t) fn(t);
    }),
  );
}

/** Sends one question (with an optional photo) and streams the reply into the conversation. */
export async function sendQuestion(text: string, image: Attachment | null): Promise<void> {
  if (busy()) return;
  const question = text.trim() || (image ? PHOTO_ONLY_QUESTION : '');
  if (!question) return;
  const userId = nextId++;
  const replyId = nextId++;
  setStore(
    'turns',
    produce((turns) => {
      turns.push({ id: userId, role: 'user', text: question, image: image ?? undefined, state: 'done' });
      turns.push({ id: replyId, role: 'assistant', text: '', state: 'thinking', analysedImage: image ?? undefined });
    }),
  );
  const mine = new AbortController();
  controller = mine;
  setBusy(true);
  setAnnouncement('Lookout is thinking…');
  let ended = false;

  const fail = (status: number, code: string, message: string) => {
    ended = true;
    const error = { title: describeFailure(status, code), message: sentence(message) };
    update(replyId, (t) => {
      t.state = 'error';
      t.error = error;
    });
    setAnnouncement(`Lookout could not answer. ${error.title} ${error.message}`);
  };

  const onEvent = (e: ChatStreamEvent) => {
    switch (e.event) {
      case 'analysis':
        update(replyId, (t) => (t.analysis = e.data));
        break;
      case 'delta':
        update(replyId, (t) => {
          t.text += e.data.content;
          t.state = 'streaming';
        });
        break;
      case 'done':
        ended = true;
        update(replyId, (t) => {
          // The full text is authoritative (a delta could have been dropped by a proxy).
          if (e.data.response) t.text = e.data.response;
          t.state = 'done';
        });
        setAnnouncement(`Lookout: ${e.data.response || '(an empty reply)'}`);
        break;
      case 'error':
        fail(ERROR_CODES[e.data.code as keyof typeof ERROR_CODES] ?? 502, e.data.code, e.data.message);
        break;
    }
  };

  try {
    await chatStream(question, image?.dataUrl, onEvent, mine.signal);
    if (!ended) {
      if (mine.signal.aborted) markStopped(replyId);
      else fail(502, 'llm_bad_gateway', 'The reply broke off before it was complete. Try again.');
    }
  } catch (err) {
    // Stopping aborts the fetch, which surfaces as an error: that is not a failure to report.
    if (mine.signal.aborted) markStopped(replyId);
    else if (err instanceof ApiFailure) fail(err.status, err.code, err.message);
    else fail(0, 'network', err instanceof Error ? err.message : String(err));
  } finally {
    if (controller === mine) controller = null;
    setBusy(false);
  }
}

function markStopped(id: number): void {
  // Gone when "New conversation" stopped it: nothing left to mark.
  if (!store.turns.some((t) => t.id === id)) return;
  update(id, (t) => (t.state = 'stopped'));
  setAnnouncement('Stopped. The reply so far is kept.');
}

/** Stops the reply being written (the server stops asking the language model too). */
export function stopReply(): void {
  controller?.abort();
}

/** Forgets the conversation (and stops a reply still coming). */
export function newConversation(): void {
  stopReply();
  setStore('turns', []);
  setAnnouncement('');
}
