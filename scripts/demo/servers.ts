/**
 * The real local services the tour's own Lookout runs with: the project's KServe V2 model server
 * (server/model-server, FaceBoxes behind OVMS's face-detection contract) for face detection on the server, and a
 * wait for the server's object detector, which loads in the background after start.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { freePort, REPO_ROOT } from '../../e2e/helpers/lookout.js';

export interface ModelServer {
  url: string;
  close(): Promise<void>;
}

const MODEL_SERVER_MAIN = 'dist/server/model-server/main.js';
const MODEL_NAME = 'face-detection-retail-0005';

/** Starts `npm run model-server`'s program on 127.0.0.1 and waits until its model is loaded (ready). */
export async function startModelServer(timeoutMs = 90_000): Promise<ModelServer> {
  if (!fs.existsSync(path.join(REPO_ROOT, MODEL_SERVER_MAIN)))
    throw new Error(`${MODEL_SERVER_MAIN} is missing: run \`npm run build\` first.`);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let log = '';
  const child: ChildProcess = spawn(process.execPath, [MODEL_SERVER_MAIN], {
    cwd: REPO_ROOT,
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), MODEL_NAME, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (d) => (log += d));
  child.stderr?.on('data', (d) => (log += d));
  const close = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  };
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the model server exited with ${child.exitCode}:\n${log}`);
      // 503 while FaceBoxes loads, 200 once it answers inferences (as OVMS).
      const ready = await fetch(`${url}/v2/models/${MODEL_NAME}/ready`).then(
        (r) => r.ok,
        () => false,
      );
      if (ready) return { url, close };
      if (Date.now() > deadline) throw new Error(`the model server did not load its model within ${timeoutMs / 1000} s:\n${log}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  } catch (err) {
    await close();
    throw err;
  }
}

/** Settings that point Lookout at the model server (face detection stays local until the tour switches it). */
export function modelServerEnv(server: ModelServer): Record<string, string> {
  return {
    REMOTE_DETECTOR_URL: server.url,
    REMOTE_DETECTOR_MODEL_NAME: MODEL_NAME,
    REMOTE_DETECTOR_DEFAULT_METHOD: 'local',
    // Lookout learns that the model server answers at its first check: a second after start, not ten.
    REMOTE_DETECTOR_CHECK_INTERVAL_MS: '1000',
    // FaceBoxes runs on this machine's CPU beside the browser's models: its first answers can take more than the
    // default 5 s on a busy laptop, and a demo that says "did not answer" shows nothing.
    REMOTE_DETECTOR_TIMEOUT_MS: '30000',
  };
}

/** Waits until Lookout has found its model server connected (it checks in the background). */
export async function remoteDetectionSettled(baseUrl: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const models = (await (await fetch(`${baseUrl}/api/ready`)).json()) as { remote_status?: string };
    if (models.remote_status === 'connected') return;
    if (Date.now() > deadline) throw new Error(`Lookout did not reach its model server (remote status ${models.remote_status})`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Waits until the server's object detector has loaded (it loads in the background after start). */
export async function objectDetectorSettled(baseUrl: string, timeoutMs = 60_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ready = (await (await fetch(`${baseUrl}/api/ready`)).json()) as { object_detection_state?: string };
    const state = ready.object_detection_state ?? 'unknown';
    if (state !== 'loading') return state;
    if (Date.now() > deadline) throw new Error('the object detector did not finish loading');
    await new Promise((r) => setTimeout(r, 250));
  }
}
