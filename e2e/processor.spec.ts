/**
 * The dashboard's event processor card against the real server, whose PROCESSOR_URL points at the REAL event
 * processor as `npm run processor` runs it (the dist/ build, spawned by test/helpers/processor-harness.ts) on its
 * embedded defaults: the in-process queue, mails as `.eml` files in `<DATA_DIR>/outbox/`, polling this server.
 * Then a processor whose Kafka cannot be reached answers "not ready" at the same address, and then none does.
 */
import fs from 'node:fs/promises';
import { expect, test } from './helpers/fixtures.js';
import { freePort, outbox, type SpawnedProcessor, spawnProcessor, tempDir, waitFor } from '../test/helpers/processor-harness.js';
import { screenshot, startLookout, TESTDATA, type Lookout } from './helpers/lookout.js';

/** Where PROCESSOR_URL points: each processor of this file listens there in turn. */
let port: number;
let dataDir: string;
let lookout: Lookout;
let processor: SpawnedProcessor | null = null;

test.beforeAll(async () => {
  port = await freePort();
  dataDir = await tempDir('lookout-e2e-processor-');
  lookout = await startLookout({
    PROCESSOR_URL: `http://127.0.0.1:${port}`,
    PROCESSOR_CHECK_INTERVAL_MS: '200',
    EMBEDDING_ENABLED: 'false',
    OBJECT_DETECTION_ENABLED: 'false',
  });
});
test.afterAll(async () => {
  await processor?.stop();
  await lookout?.close();
  await fs.rm(dataDir, { recursive: true, force: true });
});

/** `npm run processor` on PROCESSOR_URL's port, polling this file's Lookout server. */
async function runProcessor(env: Record<string, string> = {}): Promise<SpawnedProcessor> {
  await processor?.stop();
  processor = await spawnProcessor({
    DATA_DIR: dataDir,
    PROCESSOR_BACKEND_URL: lookout.url,
    PROCESSOR_PORT: String(port),
    LOG_LEVEL: 'warn',
    ...env,
  });
  return processor;
}

test('the dashboard shows the event processor: in-process queue, polling, and the mail of a person registered', async ({ page }) => {
  const p = await runProcessor();
  // A label registered before the first poll would be recorded silently (a first start announces nobody).
  await waitFor(`the processor's first poll (${p.output()})`, async () => (await p.ready())?.polls.labels.ok);

  await page.goto(lookout.url);
  const card = page.getByTestId('processor-card');
  await expect(card.getByRole('heading', { name: 'Event processor' })).toBeVisible();
  await expect(page.getByTestId('processor-state')).toHaveText('Ready');
  await expect(page.getByTestId('processor-broker')).toHaveText('In-process queue');
  await expect(page.getByTestId('processor-role')).toHaveText('Polling');
  await expect(page.getByTestId('processor-mails')).toHaveText('0 sent, 0 failed attempts, 0 dead-lettered');
  await expect(card).toContainText('Label poll');
  await expect(card).toContainText('Queue lag');
  // No REMOTE_DETECTOR_URL: no remote model poll.
  await expect(card).not.toContainText('Remote model');

  // A person registered through the API: the processor announces her and mails security.
  const form = new FormData();
  form.set('label', 'ada');
  form.set('file', new Blob([await fs.readFile(`${TESTDATA}/faces/grace_hopper.jpg`)]), 'ada.jpg');
  expect((await fetch(`${lookout.url}/api/images`, { method: 'POST', body: form })).status).toBe(200);
  // No reload: the dashboard asks again at its own cadence.
  await expect(page.getByTestId('processor-mails')).toHaveText('1 sent, 0 failed attempts, 0 dead-lettered');
  const mails = await outbox(dataDir);
  expect(mails).toHaveLength(1);
  expect(mails[0]!.raw).toMatch(/^Subject: New person registered: ada/m);
  await expect(card).not.toContainText('Last mail error');
  await screenshot(page, 'dashboard-processor');
});

test('the card follows the processor: not ready when its Kafka cannot be reached, then unreachable', async ({ page }) => {
  await page.goto(lookout.url);
  await expect(page.getByTestId('processor-state')).toBeVisible();
  // Nothing listens on 127.0.0.1:1: the processor answers, but 503 "not ready", and keeps trying.
  await runProcessor({ KAFKA_BROKERS: '127.0.0.1:1' });
  // No reload: the dashboard asks again at its own cadence.
  await expect(page.getByTestId('processor-state')).toHaveText('Not ready');
  await expect(page.getByTestId('processor-broker')).toHaveText('Kafka, not connected');
  await expect(page.getByTestId('processor-role')).toHaveText('Stopped');
  await expect(page.getByTestId('processor-mails')).toContainText('0 sent');
  await expect(page.getByTestId('processor-card')).not.toContainText('Remote model');

  await processor!.stop();
  await expect(page.getByTestId('processor-state')).toHaveText('Unreachable');
  await expect(page.getByTestId('processor-card')).toContainText('cannot be reached');
  await screenshot(page, 'dashboard-processor-unreachable');
});
