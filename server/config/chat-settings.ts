/** Chat: the language model (an OpenAI-compatible server or a local GGUF file) and the facial-feature cascades of its image analysis. Part of the settings table (settings.ts); documented in docs/settings.md. */
import { z } from 'zod';
import { boolean, integer, number, type SettingSpec } from './setting-schemas.js';

export const CHAT_SETTINGS = {
  chatEnabled: { env: 'CHAT_ENABLED', schema: boolean, default: 'true', doc: 'Enables the chat feature.' },
  chatEndpoint: {
    env: 'CHAT_ENDPOINT',
    schema: z.union([z.literal(''), z.url({ protocol: /^https?$/ })]),
    default: '',
    doc: 'Base URL of an OpenAI-compatible LLM server (`/v1/chat/completions` is appended); empty: chat not configured.',
  },
  chatModelPath: {
    env: 'CHAT_MODEL_PATH',
    schema: z.string().trim(),
    default: '',
    doc: 'A GGUF model file Lookout hosts itself for offline chat (node-llama-cpp, `npm run llama:install`); wins over CHAT_ENDPOINT.',
  },
  chatThreads: {
    env: 'CHAT_THREADS',
    schema: integer(1, 256),
    default: '2',
    doc: 'CPU threads of the offline chat model.',
  },
  chatModel: {
    env: 'CHAT_MODEL',
    schema: z.string().trim(),
    default: '',
    doc: 'Model name sent to the LLM; empty: the first model the server lists.',
  },
  chatApiKey: {
    env: 'CHAT_API_KEY',
    schema: z.string().trim(),
    default: '',
    doc: 'API key sent as a bearer token (never logged or returned).',
  },
  chatTokenFile: {
    env: 'CHAT_TOKEN_FILE',
    schema: z.string().trim(),
    default: '',
    doc: 'File holding a bearer token (e.g. the in-cluster service-account token), re-read when it changes.',
  },
  chatSystemPrompt: {
    env: 'CHAT_SYSTEM_PROMPT',
    schema: z.string(),
    default: '',
    doc: 'System text of every chat prompt; empty: the built-in one.',
  },
  chatMaxTokens: {
    env: 'CHAT_MAX_TOKENS',
    schema: integer(1, 32768),
    default: '512',
    doc: 'Largest reply, in tokens.',
  },
  chatTemperature: {
    env: 'CHAT_TEMPERATURE',
    schema: number(0, 2),
    default: '0.7',
    doc: 'Sampling temperature, 0 to 2.',
  },
  chatTimeoutMs: {
    env: 'CHAT_TIMEOUT_MS',
    schema: integer(100, 3_600_000),
    default: '60000',
    doc: 'Timeout of one LLM call, in milliseconds (for a streamed reply: the longest silence).',
  },
  chatMaxMessageChars: {
    env: 'CHAT_MAX_MESSAGE_CHARS',
    schema: integer(1, 100_000),
    default: '4000',
    doc: 'Longest chat message accepted, in characters (longer: 400).',
  },
  chatCheckIntervalMs: {
    env: 'CHAT_CHECK_INTERVAL_MS',
    schema: integer(200, 3_600_000),
    default: '30000',
    doc: 'How often the LLM endpoint is checked in the background, in milliseconds.',
  },
  eyeCascadeFile: {
    env: 'EYE_CASCADE_FILE',
    schema: z.string().trim().min(1),
    default: 'public/models/haarcascade_eye.xml',
    doc: "OpenCV eye cascade XML of the chat analysis' facial features (relative to the app directory or absolute).",
  },
  eyeglassesCascadeFile: {
    env: 'EYEGLASSES_CASCADE_FILE',
    schema: z.string().trim().min(1),
    default: 'public/models/haarcascade_eye_tree_eyeglasses.xml',
    doc: "OpenCV eye-with-eyeglasses cascade XML of the chat analysis' facial features (relative to the app directory or absolute).",
  },
  smileCascadeFile: {
    env: 'SMILE_CASCADE_FILE',
    schema: z.string().trim().min(1),
    default: 'public/models/haarcascade_smile.xml',
    doc: "OpenCV smile cascade XML of the chat analysis' facial features (relative to the app directory or absolute).",
  },
  profileCascadeFile: {
    env: 'PROFILE_CASCADE_FILE',
    schema: z.string().trim().min(1),
    default: 'public/models/haarcascade_profileface.xml',
    doc: "OpenCV profile-face cascade XML of the facial analysis' `profile_face` (relative to the app directory or absolute).",
  },
} as const satisfies Record<string, SettingSpec>;
