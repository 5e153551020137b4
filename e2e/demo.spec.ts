/**
 * `npm run demo` (scripts/demo/tour.ts) headless with short pauses, as `npm run demo` runs it: its own fresh server
 * (an empty data directory) beside the project's own model server, no PPE detector and no language model. Each
 * step leaves a screenshot whose caption covers nothing it describes, the video is a WebM that Chromium plays at
 * the tour's size, README.txt lists the files, and the tour saw what it claims: only steps that work here (no
 * "switched off" Safety or Chat page), real faces in the group photo (the model server's four, all strangers),
 * object labels, nobody named who was not added on screen, and last the person trained from the camera named live.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runDemo } from '../scripts/demo/tour.js';
import { CHROMIUM_ARGS, CHROMIUM_PATH, DESKTOP_VIEWPORT } from './helpers/browser.js';
import { chromium, expect, test } from './helpers/fixtures.js';

const STEPS = ['dashboard', 'training-photos', 'training-done', 'group-photo', 'objects', 'recognize-live'];

let outDir: string;
test.beforeAll(() => {
  outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-demo-test-'));
});
test.afterAll(() => {
  fs.rmSync(outDir, { recursive: true, force: true });
});

test('the captioned tour runs headless and leaves its screenshots, video and index', async () => {
  // The tour itself starts two servers, trains and loads the browser's models: generous on a busy 2-core box.
  test.setTimeout(300_000);
  // The machine's settings must not add a PPE detector or a language model to the tour's server.
  const result = await runDemo({ pauseMs: 100, outDir, env: { PPE_ENABLED: 'false', CHAT_ENDPOINT: '', CHAT_MODEL_PATH: '' } });

  expect(result.config).toEqual({ remoteDetection: true, safety: false, chat: false });
  expect(result.steps.map((s) => s.slug)).toEqual(STEPS);
  for (const [i, step] of result.steps.entries()) {
    expect(path.basename(step.screenshot)).toBe(`${String(i + 1).padStart(2, '0')}-${STEPS[i]}.png`);
    const png = fs.readFileSync(step.screenshot);
    expect(png.subarray(0, 8).toString('hex'), step.screenshot).toBe('89504e470d0a1a0a');
    expect(png.length, step.screenshot).toBeGreaterThan(10_000);
    // The caption found a corner off what it describes.
    expect(step.captionCovers, `${step.slug}: the caption covers what it describes`).toBe(0);
    expect(`${step.caption} ${step.outcome}`, step.slug).not.toMatch(/switched off|not configured|no language model/i);
  }
  expect(fs.readdirSync(outDir).filter((f) => f.endsWith('-failed.png'))).toEqual([]);

  // What the tour saw on the pages: nobody before, only the person added on screen after.
  expect(result.seen.peopleBefore).toEqual([]);
  expect(result.seen.peopleAfter).toEqual(['grace-hopper']);
  expect(result.seen.liveName).toContain('Grace Hopper');
  expect(result.seen.liveName).toMatch(/\d+% match/);
  expect(result.seen.liveName).not.toMatch(/unknown/);
  // sample4.jpg: four people, four faces from the model server (the cascade there boxes walls and shadows elsewhere).
  expect(result.seen.groupDetection).toBe('remote');
  expect(result.seen.faceCards).toHaveLength(4);
  // The group photo's shot shows the photo (it was once scrolled past it, to the cards).
  expect(result.seen.groupPhotoShown).toBeGreaterThan(0.9);
  // #36: an unknown face shows no percentage (it read "unknown 0% match").
  for (const card of result.seen.faceCards) expect(card).toMatch(/^unknown\b(?!.*%).*\d+ x \d+ px/);
  expect(result.seen.objectLabels).toContain('bus');
  expect(result.seen.safety).toBeNull();
  expect(result.seen.chat).toBeNull();

  // The index names every file the tour left.
  const index = fs.readFileSync(path.join(outDir, 'README.txt'), 'utf8');
  for (const step of result.steps) expect(index).toContain(path.basename(step.screenshot));
  expect(index).toContain('tour.webm');

  // The video: a WebM file (EBML header) that Chromium decodes at the tour's size and that lasts as long as the tour.
  const video = fs.readFileSync(result.video);
  expect(video.subarray(0, 4).toString('hex')).toBe('1a45dfa3');
  expect(video.length).toBeGreaterThan(50_000);
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  try {
    const page = await browser.newPage();
    await page.route('http://demo.test/**', (route) =>
      route.request().url().endsWith('.webm')
        ? route.fulfill({ body: video, contentType: 'video/webm' })
        : route.fulfill({
            body: '<!doctype html><html lang="en"><title>video</title><video muted></video></html>',
            contentType: 'text/html',
          }),
    );
    await page.goto('http://demo.test/');
    // A MediaRecorder file has no duration in its header: play it through to learn how long it is.
    const played = await page.evaluate<{ width: number; height: number; seconds: number }>(`new Promise((resolve, reject) => {
      const v = document.querySelector('video');
      v.onerror = () => reject(new Error('the video could not be decoded'));
      v.onloadedmetadata = () => { v.currentTime = 1e9; };
      v.ondurationchange = () => { if (Number.isFinite(v.duration)) resolve({ width: v.videoWidth, height: v.videoHeight, seconds: v.duration }); };
      v.src = 'http://demo.test/tour.webm';
    })`);
    expect({ width: played.width, height: played.height }).toEqual(DESKTOP_VIEWPORT);
    expect(played.seconds).toBeGreaterThan(5);
  } finally {
    await browser.close();
  }
});
