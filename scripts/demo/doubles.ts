/**
 * `--with-test-doubles`: the repo's test doubles stand in for the services the demo machine may not have, so the
 * Safety and Chat steps show their full flow: the PPE detector double (canned detections: two persons, one
 * equipped, drawn on any picture) and the OpenAI-compatible double (a canned, streamed reply). The captions say
 * that these answers are canned. Both listen on 127.0.0.1 only.
 */
import { startOpenAIDouble } from '../../test/helpers/openai-double.js';
import { startPpeDetectorDouble } from '../../test/helpers/ppe-detector-double.js';

export const DOUBLE_REPLY_PIECES = [
  '(A canned reply from the test double.) ',
  'I see a red double-decker bus, ',
  'cars and people in a street.',
];

export interface Doubles {
  /** Settings that point the demo's server at the doubles. */
  env: Record<string, string>;
  close(): Promise<void>;
}

export async function startDoubles(): Promise<Doubles> {
  const ppe = await startPpeDetectorDouble({ scene: 'two-persons-one-equipped' });
  const llm = await startOpenAIDouble({ pieces: DOUBLE_REPLY_PIECES, reply: DOUBLE_REPLY_PIECES.join('') }).catch(async (err) => {
    await ppe.close();
    throw err;
  });
  return {
    env: { PPE_ENABLED: 'true', PPE_ENDPOINT: ppe.url, CHAT_ENDPOINT: llm.url },
    close: async () => {
      await Promise.all([ppe.close(), llm.close()]);
    },
  };
}
