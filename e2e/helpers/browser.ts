/** How the tests start Debian's Chromium (the same flags as the browser benchmarks) and its fake camera. */
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../../bench/chromium.js';

export { CHROMIUM_ARGS, CHROMIUM_PATH };

/** Chromium's fake webcam playing a Y4M file, with the permission prompt answered "allow". */
export function fakeCameraArgs(y4mPath: string): string[] {
  return [
    ...CHROMIUM_ARGS,
    '--use-fake-ui-for-media-stream',
    '--use-fake-device-for-media-stream',
    `--use-file-for-fake-video-capture=${y4mPath}`,
  ];
}

export const PHONE_VIEWPORT = { width: 390, height: 844 };
export const DESKTOP_VIEWPORT = { width: 1280, height: 800 };

/**
 * Pins the recognition and objects pages to the server's engines (their default is in this browser), for
 * tests of the server path: what is sent, one request in flight, the server's switches.
 */
export async function analyseOnServer(page: import('@playwright/test').Page): Promise<void> {
  // A string: this project's e2e code is compiled without the DOM's types.
  await page.addInitScript(
    "localStorage.setItem('lookout.place.recognize', 'server'); localStorage.setItem('lookout.place.objects', 'server');",
  );
}

/**
 * A phone reading large photos: every picture the page decodes from a picked file takes `ms` longer, so a button
 * pressed right after picking files is pressed while the last ones are still being read.
 */
export async function slowFileDecoding(page: import('@playwright/test').Page, ms: number): Promise<void> {
  await page.addInitScript(`(() => {
    const decode = window.createImageBitmap.bind(window);
    window.createImageBitmap = async (source, ...rest) => {
      if (source instanceof File) await new Promise((resolve) => setTimeout(resolve, ${ms}));
      return decode(source, ...rest);
    };
  })()`);
}
