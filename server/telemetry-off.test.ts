/**
 * onnxruntime-node 1.30 starts Microsoft's telemetry at the first session (files in TMPDIR, HTTPS uploads where
 * it finds a CA bundle). server/telemetry-off.ts, imported first by the entry points, must stop it. Each check
 * runs in a fresh Node process with its own TMPDIR and a minimal environment, and looks at what the library left
 * there. The control shows the check can see telemetry. The environment is minimal because the library stays quiet
 * where it sees CI variables (`CI=true`, as CI machines set), and vitest sets ORT_DISABLE_TELEMETRY for the tests.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { buildConstantOutputModel, yoloOutput } from '../test/helpers/onnx-builder.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const work = mkdtempSync(path.join(os.tmpdir(), 'lookout-telemetry-'));
const model = path.join(work, 'tiny.onnx');
writeFileSync(
  model,
  buildConstantOutputModel({ inputShape: [1, 3, 32, 32], output: yoloOutput('v8', [{ cx: 8, cy: 8, w: 4, h: 4, scores: { 0: 0.9 } }], 1) }),
);

afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Files a process left in its TMPDIR after making one onnxruntime session, with `before` run first. */
function filesLeftBySession(before: string): string[] {
  const tmp = mkdtempSync(path.join(work, 'tmp-'));
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: tmp };
  const script = `${before}
const ort = await import(${JSON.stringify(pathToFileURL(path.join(REPO, 'node_modules/onnxruntime-node/dist/index.js')).href)});
await ort.InferenceSession.create(${JSON.stringify(model)});`;
  execFileSync(process.execPath, ['--input-type=module', '-e', script], { env, cwd: work, stdio: 'pipe' });
  return readdirSync(tmp);
}

describe('onnxruntime telemetry', () => {
  it('is written without server/telemetry-off.ts (the control)', () => {
    expect(filesLeftBySession('')).toEqual(expect.arrayContaining(['.ses']));
  });

  it('is off once server/telemetry-off.ts ran first', () => {
    const off = pathToFileURL(path.join(REPO, 'server/telemetry-off.ts')).href;
    // The module only sets one variable: evaluate its source as the entry points do (no TypeScript loader here).
    expect(
      filesLeftBySession(
        `await import('data:text/javascript,' + encodeURIComponent((await import('node:fs')).readFileSync(new URL(${JSON.stringify(off)}), 'utf8')));`,
      ),
    ).toEqual([]);
  });
});
