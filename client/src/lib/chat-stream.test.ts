/** The chat's SSE reading (readChatEvents) on byte streams cut the ways a network cuts them. */
import { describe, expect, it } from 'vitest';
import { readChatEvents, type ChatStreamEvent } from './chat-stream';

/** A body delivering `chunks` (strings, UTF-8 encoded; or raw bytes) one read at a time. */
function body(chunks: (string | Uint8Array<ArrayBuffer>)[]): ReadableStream<Uint8Array<ArrayBuffer>> {
  const enc = new TextEncoder();
  return new ReadableStream({
    start(c) {
      for (const ch of chunks) c.enqueue(typeof ch === 'string' ? enc.encode(ch) : ch);
      c.close();
    },
  });
}

async function events(chunks: (string | Uint8Array<ArrayBuffer>)[]): Promise<ChatStreamEvent[]> {
  const seen: ChatStreamEvent[] = [];
  await readChatEvents(body(chunks), (e) => seen.push(e));
  return seen;
}

/** The bytes Hono's writeSSE sends for one event. */
const sse = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

const REPLY = [
  sse('analysis', { faces: [], objects: [] }),
  sse('delta', { content: 'Hello' }),
  sse('delta', { content: ', world' }),
  sse('done', { response: 'Hello, world' }),
].join('');

const EXPECTED: ChatStreamEvent[] = [
  { event: 'analysis', data: { faces: [], objects: [] } as never },
  { event: 'delta', data: { content: 'Hello' } },
  { event: 'delta', data: { content: ', world' } },
  { event: 'done', data: { response: 'Hello, world' } },
];

describe('readChatEvents', () => {
  it('reads the events of a whole reply in order', async () => {
    expect(await events([REPLY])).toEqual(EXPECTED);
  });

  it('reads the same events whatever the chunk boundaries (mid-field, mid-line, between CR and LF)', async () => {
    const crlf = REPLY.replace(/\n/g, '\r\n');
    for (const text of [REPLY, crlf]) {
      for (const size of [1, 2, 3, 7, 13]) {
        const chunks: string[] = [];
        for (let i = 0; i < text.length; i += size) chunks.push(text.slice(i, i + size));
        expect(await events(chunks)).toEqual(EXPECTED);
      }
    }
  });

  it('keeps a multi-byte character split across chunks whole', async () => {
    const bytes = new TextEncoder().encode(sse('delta', { content: 'Grüße 👋' }));
    const at = bytes.indexOf(0xc3) + 1; // inside "ü"
    expect(await events([bytes.slice(0, at), bytes.slice(at)])).toEqual([{ event: 'delta', data: { content: 'Grüße 👋' } }]);
  });

  it('accepts CRLF and lone CR line ends', async () => {
    expect(await events(['event: delta\r\ndata: {"content":"a"}\r\n\r\n', 'event: delta\rdata: {"content":"b"}\r\r'])).toEqual([
      { event: 'delta', data: { content: 'a' } },
      { event: 'delta', data: { content: 'b' } },
    ]);
  });

  it('joins multi-line data with newlines', async () => {
    expect(await events(['event: done\ndata: {"response":\ndata: "two\\nlines"}\n\n'])).toEqual([
      { event: 'done', data: { response: 'two\nlines' } },
    ]);
  });

  it('passes the error event on', async () => {
    const text = sse('analysis', null) + sse('error', { code: 'llm_timeout', message: 'the model took too long' });
    expect(await events([text])).toEqual([
      { event: 'analysis', data: null },
      { event: 'error', data: { code: 'llm_timeout', message: 'the model took too long' } },
    ]);
  });

  it('ignores comments, ids, retry hints and events it does not know', async () => {
    const text = `: keep-alive\n\nretry: 1000\nid: 7\n\nevent: ping\ndata: {}\n\ndata: {"unnamed":true}\n\n${sse('delta', { content: 'x' })}`;
    expect(await events([text])).toEqual([{ event: 'delta', data: { content: 'x' } }]);
  });

  it('resolves when the stream ends without done, and drops an event cut off by the end', async () => {
    const text = `${sse('delta', { content: 'Hel' })}event: delta\ndata: {"content":"lo"}\n`;
    expect(await events([text])).toEqual([{ event: 'delta', data: { content: 'Hel' } }]);
    expect(await events([])).toEqual([]);
  });

  it('refuses data that is not JSON with a readable failure', async () => {
    await expect(events(['event: delta\ndata: not json\n\n'])).rejects.toMatchObject({ status: 502, code: 'llm_bad_gateway' });
  });
});
