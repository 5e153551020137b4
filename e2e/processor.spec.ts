/**
 * The dashboard's event processor card against the real server, whose PROCESSOR_URL points at the processor
 * TEST DOUBLE of test/helpers/processor-double.ts (a real HTTP server answering `GET /ready`).
 */
import { expect, test } from '@playwright/test';
import { sampleProcessorReady, startProcessorDouble, type ProcessorDouble } from '../test/helpers/processor-double.js';
import { screenshot, startLookout, type Lookout } from './helpers/lookout.js';

let processor: ProcessorDouble;
let lookout: Lookout;

test.beforeAll(async () => {
  processor = await startProcessorDouble();
  lookout = await startLookout({
    PROCESSOR_URL: processor.url,
    PROCESSOR_CHECK_INTERVAL_MS: '200',
    EMBEDDING_ENABLED: 'false',
    OBJECT_DETECTION_ENABLED: 'false',
  });
});
test.afterAll(async () => {
  await lookout?.close();
  await processor?.close();
});

test('the dashboard shows the event processor: broker, role, polls, queue and mails', async ({ page }) => {
  processor.mode = 'ready';
  processor.body = sampleProcessorReady();
  await page.goto(lookout.url);
  const card = page.getByTestId('processor-card');
  await expect(card.getByRole('heading', { name: 'Event processor' })).toBeVisible();
  await expect(page.getByTestId('processor-state')).toHaveText('Ready');
  await expect(page.getByTestId('processor-broker')).toHaveText('Kafka, connected');
  await expect(page.getByTestId('processor-role')).toHaveText('Polling');
  await expect(page.getByTestId('processor-mails')).toHaveText('7 sent, 2 failed attempts, 1 dead-lettered');
  await expect(card).toContainText('Queue lag');
  await expect(card).toContainText('AVAILABLE');
  await expect(card).toContainText('mailpit answered 500');
  await screenshot(page, 'dashboard-processor');
});

test('the card follows the processor: not ready on the in-process queue, standing by, then unreachable', async ({ page }) => {
  await page.goto(lookout.url);
  await expect(page.getByTestId('processor-state')).toBeVisible();
  const body = sampleProcessorReady();
  processor.body = {
    ...body,
    broker: { ...body.broker, kind: 'in-process', brokers: [] },
    role: 'standby',
    polls: { ...body.polls, remote: null },
    mail: { ...body.mail, sent: 0, last_error: null },
  };
  processor.mode = 'not_ready';
  // No reload: the dashboard asks again at its own cadence.
  await expect(page.getByTestId('processor-state')).toHaveText('Not ready');
  await expect(page.getByTestId('processor-broker')).toHaveText('In-process queue');
  await expect(page.getByTestId('processor-role')).toHaveText('Standby');
  await expect(page.getByTestId('processor-mails')).toContainText('0 sent');
  await expect(page.getByTestId('processor-card')).not.toContainText('Remote model');

  await processor.close();
  await expect(page.getByTestId('processor-state')).toHaveText('Unreachable');
  await expect(page.getByTestId('processor-card')).toContainText('cannot be reached');
  await screenshot(page, 'dashboard-processor-unreachable');
});
