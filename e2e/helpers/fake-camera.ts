/** Chromium's fake webcam fed by a test photo from test/fixtures/images (bench/fake-camera.ts writes the Y4M). */
import path from 'node:path';
import { makeY4m } from '../../bench/fake-camera.js';
import { TESTDATA } from './lookout.js';

export function makeFakeCamera(photo: string, width = 640, height = 480): Promise<string> {
  return makeY4m(path.join(TESTDATA, photo), width, height);
}
