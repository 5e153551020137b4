/**
 * #29 §5 on the Models page: after a training with local detection, switching to remote (Lookout's own model server
 * on 127.0.0.1) says that the LBPH model was trained with the other detector and offers the retraining; the
 * retraining runs from the page, says what it trained, and the hint goes. Against the real server; axe-clean.
 */
import { listenModelServer, type RunningModelServer } from '../server/model-server/app.js';
import { trainOnServer } from './helpers/engine-page.js';
import { checkAccessibility, expect, test } from './helpers/fixtures.js';
import { ownModelServerEnv, startLookout, type Lookout } from './helpers/lookout.js';

let modelServer: RunningModelServer | undefined;
let lookout: Lookout;
test.beforeAll(async () => {
  modelServer = await listenModelServer({ port: 0, host: '127.0.0.1' });
  lookout = await startLookout(ownModelServerEnv(modelServer.url));
});
test.afterAll(async () => {
  await lookout?.close();
  await modelServer?.close();
});

test('a switch of detection method says the LBPH model needs a retraining, and the page runs it', async ({ page }) => {
  test.setTimeout(240_000);
  const trained = await trainOnServer(lookout, { grace: 'faces/grace_hopper.jpg', eileen: 'faces/astronaut.png' });
  expect(trained.labels).toEqual(['eileen', 'grace']);

  await page.goto(`${lookout.url}/config`);
  const detection = page.getByRole('group', { name: 'Face detection method' });
  const remote = detection.getByRole('radio', { name: 'Remote' });
  // The page keeps asking until the model server is connected.
  await expect(remote).toBeEnabled({ timeout: 60_000 });
  await expect(page.getByTestId('retrain-hint')).toHaveCount(0);

  await remote.check();
  await expect(page.getByTestId('config-message')).toContainText('Face detection now uses remote');
  const hint = page.getByTestId('retrain-hint');
  await expect(hint).toContainText('The LBPH model was trained with local face detection');
  await checkAccessibility(page, 'config-retrain-hint');

  await hint.getByRole('button', { name: 'Retrain with remote detection' }).click();
  await expect(page.getByTestId('retrain-done')).toContainText('Retrained with remote detection: 8 faces of 2 people', {
    timeout: 120_000,
  });
  await expect(page.getByTestId('retrain-hint')).toHaveCount(0);
  const config = (await (await fetch(`${lookout.url}/api/models/config`)).json()) as Record<string, unknown>;
  expect(config).toMatchObject({ detection_method: 'remote', trained_detection_method: 'remote', retrain_recommended: false });
});
