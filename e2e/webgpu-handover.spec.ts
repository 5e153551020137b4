/**
 * #29: object detection never waits for WebGPU. This Chromium has no GPU: with --enable-unsafe-webgpu its only
 * WebGPU adapter is SwiftShader, a CPU emulation. Asked for WebGPU, tfjs runs on it, so the engine starts the
 * GPU lane for NanoDet, in its own worker; the lane finds the adapter is software and gives up with the reason,
 * while the first detection was answered on WASM. The switch to a warm WebGPU lane is covered with a slow fake
 * backend (client/src/engine/gpu-handover.test.ts): no GPU was lent to this work.
 */
import path from 'node:path';
import { chromium, expect, test } from './helpers/fixtures.js';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from './helpers/browser.js';
import { openEnginePage } from './helpers/engine-page.js';
import { startLookout, TESTDATA, type Lookout } from './helpers/lookout.js';

let lookout: Lookout;
test.beforeAll(async () => {
  lookout = await startLookout();
});
test.afterAll(async () => {
  await lookout?.close();
});

interface ObjectBackend {
  runtime: string | null;
  gpu: 'off' | 'warming' | 'warm' | 'failed';
  gpuReason?: string;
}

test('on a software WebGPU adapter the first detection answers on WASM and the GPU lane gives up, saying why', async () => {
  test.setTimeout(180_000);
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: [...CHROMIUM_ARGS, '--enable-unsafe-webgpu'] });
  try {
    const page = await browser.newPage();
    const engine = await openEnginePage(page, lookout.url);
    const init = await engine.initWith({ backend: 'webgpu', preload: { embedding: false, objects: false } });
    expect(init.backend.backend).toBe('webgpu');
    const first = (await engine.detectObjectsFile('objects/chelsea.png')) as { runtime?: string; count: number };
    expect(first.runtime).toBe('onnxruntime-web wasm');
    expect(first.count).toBeGreaterThan(0);
    const backend = await page.evaluate(() =>
      (globalThis as unknown as { lookoutEngine: { objectBackend(): Promise<ObjectBackend> } }).lookoutEngine.objectBackend(),
    );
    expect(backend).toMatchObject({ runtime: 'onnxruntime-web wasm', gpu: 'failed' });
    expect(backend.gpuReason).toMatch(/no WebGPU adapter on a real GPU/);
    // Given up for good: the next frame is on WASM too, and nothing is tried again.
    const second = (await engine.detectObjectsFile('objects/chelsea.png')) as { runtime?: string };
    expect(second.runtime).toBe('onnxruntime-web wasm');
  } finally {
    await browser.close();
  }
});

test('the Objects page says which backend detects', async ({ page }) => {
  await page.goto(`${lookout.url}/objects`);
  await expect(page.getByRole('radio', { name: 'In this browser' })).toBeChecked();
  await page.getByRole('radio', { name: 'Photo' }).check();
  await page.getByLabel('Upload a photo').setInputFiles(path.join(TESTDATA, 'objects/chelsea.png'));
  await expect(page.getByTestId('object-summary')).toContainText('cat', { timeout: 60_000 });
  // No GPU here ('auto' passes over the software adapter): WASM, and no WebGPU warm-up is announced.
  await expect(page.getByTestId('objects-backend')).toHaveText('Detecting on WASM.');
});
