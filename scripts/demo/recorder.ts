/**
 * Records the tour as a WebM video without ffmpeg: Playwright's `recordVideo` needs its own downloaded ffmpeg,
 * which this project does not fetch (Debian's Chromium only, no network). Instead Chromium's DevTools screencast
 * sends the tour page's frames (JPEG) to a second, headless Chromium whose page draws them on a canvas and encodes
 * that with MediaRecorder (VP8), so the encoder is the browser's own. Frames keep their real timing: a caption's
 * pause lasts as long in the video. The file is written in one-second pieces as it is recorded.
 */
import fs from 'node:fs';
import { type Browser, chromium, type Page } from '@playwright/test';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../../e2e/helpers/browser.js';

export interface Recording {
  /** Stops the screencast, finishes the WebM file and closes the encoder; the number of frames drawn. */
  stop(): Promise<{ frames: number; bytes: number }>;
}

// The encoder page (a string: this project's node code is type-checked without the DOM library). It redraws the
// last frame every 100 ms, since a canvas stream only yields frames when the canvas is drawn on.
const ENCODER = (width: number, height: number) => `
  const canvas = document.createElement('canvas');
  canvas.width = ${width}; canvas.height = ${height};
  document.body.append(canvas);
  const ctx = canvas.getContext('2d');
  ctx.fillStyle = '#000'; ctx.fillRect(0, 0, ${width}, ${height});
  let last = null;
  let pending = Promise.resolve();
  const recorder = new MediaRecorder(canvas.captureStream(25), { mimeType: 'video/webm;codecs=vp8', videoBitsPerSecond: 2500000 });
  recorder.ondataavailable = (e) => {
    pending = pending.then(async () => {
      const bytes = new Uint8Array(await e.data.arrayBuffer());
      let s = '';
      for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
      await window.__chunk(btoa(s));
    });
  };
  const draw = () => { if (last) ctx.drawImage(last, 0, 0, ${width}, ${height}); };
  setInterval(draw, 100);
  window.__frame = async (b64) => {
    const blob = await (await fetch('data:image/jpeg;base64,' + b64)).blob();
    last = await createImageBitmap(blob);
    draw();
  };
  window.__stop = () => new Promise((resolve) => {
    recorder.onstop = () => pending.then(resolve);
    recorder.stop();
  });
  recorder.start(1000);
`;

export async function startRecording(page: Page, file: string, size: { width: number; height: number }): Promise<Recording> {
  const encoderBrowser: Browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS, headless: true });
  const encoder = await encoderBrowser.newPage();
  fs.writeFileSync(file, '');
  let bytes = 0;
  await encoder.exposeFunction('__chunk', (b64: string) => {
    const buf = Buffer.from(b64, 'base64');
    bytes += buf.length;
    fs.appendFileSync(file, buf);
  });
  await encoder.setContent('<!doctype html><title>Lookout demo encoder</title><body style="margin:0"></body>');
  await encoder.evaluate(ENCODER(size.width, size.height));

  const cdp = await page.context().newCDPSession(page);
  let frames = 0;
  // One frame on its way to the encoder at a time; a newer one replaces any that waits (the video drops frames,
  // the tour never waits for the encoder).
  let sending = false;
  let waiting: string | null = null;
  let stopped = false;
  const send = async () => {
    if (sending) return;
    sending = true;
    while (waiting && !stopped) {
      const data = waiting;
      waiting = null;
      await encoder.evaluate((d) => (globalThis as unknown as { __frame(d: string): Promise<void> }).__frame(d), data).catch(() => {});
      frames++;
    }
    sending = false;
  };
  cdp.on('Page.screencastFrame', (f) => {
    cdp.send('Page.screencastFrameAck', { sessionId: f.sessionId }).catch(() => {});
    waiting = f.data;
    void send();
  });
  await cdp.send('Page.startScreencast', { format: 'jpeg', quality: 85, maxWidth: size.width, maxHeight: size.height });

  return {
    stop: async () => {
      await cdp.send('Page.stopScreencast').catch(() => {});
      // Let the frame on its way arrive, then finish the file.
      while (sending) await new Promise((r) => setTimeout(r, 20));
      stopped = true;
      await cdp.detach().catch(() => {});
      await encoder.evaluate('window.__stop()');
      await encoderBrowser.close();
      return { frames, bytes };
    },
  };
}
