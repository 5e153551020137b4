import path from 'node:path';
import { chromium } from '@playwright/test';
import { CHROMIUM_PATH, fakeCameraArgs } from '../../e2e/helpers/browser.js';
import { startLookout, TESTDATA } from '../../e2e/helpers/lookout.js';
import { makeZoomingCamera } from './camera.js';
const cam = await makeZoomingCamera(path.join(TESTDATA, 'faces/grace_hopper.jpg'));
const l = await startLookout();
const b = await chromium.launch({ executablePath: CHROMIUM_PATH, args: fakeCameraArgs(cam) });
try {
  const p = await b.newPage();
  p.on('console', (m) => console.log('console', m.text()));
  await p.goto(`${l.url}/training`);
  await p.waitForTimeout(4000);
  console.log(await p.evaluate(`JSON.stringify([...document.querySelectorAll('video')].map(v => [v.videoWidth, v.readyState]))`));
  await p.getByTestId('training-camera').getByRole('button', { name: 'Take photo' }).click();
  await p.waitForTimeout(1000);
  console.log((await p.getByTestId('training-camera').innerText()).slice(0, 500));
  console.log(await p.getByTestId('capture-thumb').count());
} finally {
  await b.close();
  await l.close();
}
