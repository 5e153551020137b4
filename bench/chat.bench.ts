/**
 * Chat overhead without the LLM: what POST /api/chat adds before the LLM is asked, i.e. the face analysis
 * (active detection engine + recognizer), object detection and prompt building, per image. Measured on the
 * real service in-process; the LLM endpoint is configured but never called (prepare() stops before it).
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createService } from '../server/app.js';
import { loadSettings } from '../server/config/settings.js';
import { createLogger } from '../server/logger.js';
import { median, type BenchRow } from './types.js';

export async function benchChat(repoRoot: string, photo640: Buffer): Promise<BenchRow[]> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-bench-chat-'));
  // Port 9 (discard) on loopback: configured, so chat is enabled, and never contacted by prepare().
  const settings = loadSettings({ DATA_DIR: dataDir, LOG_LEVEL: 'error', CHAT_ENDPOINT: 'http://127.0.0.1:9' }, repoRoot);
  const service = await createService(settings, createLogger('error'));
  try {
    const image = new Uint8Array(photo640);
    const prepare = () => service.ctx.chat.prepare('Who is in this picture, and what else is there?', image);
    for (let i = 0; i < 3; i++) await prepare(); // warm-up; the first call also waits for the object detector to load
    const times: number[] = [];
    for (let i = 0; i < 15; i++) {
      const t0 = performance.now();
      await prepare();
      times.push(performance.now() - t0);
    }
    return [
      {
        name: 'chat overhead without the LLM (faces + objects + prompt), 640x480 JPEG',
        unit: 'ms',
        lookout: median(times),
      },
    ];
  } finally {
    await service.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}
