/**
 * The captioned tour of Lookout (`npm run demo`, issues #18 item 8 and #29): the real server, started on 127.0.0.1
 * with an empty data directory beside the project's own model server (server/model-server) unless a URL is given,
 * and Chromium with a fake camera, going through the pages as a person would: the first start, a person taught from
 * the camera, strangers in a group photo, objects in a street, Safety and Chat where the server has them, and last
 * the person named live. Only what works in the configuration toured is shown (scripts/demo/plan.ts), every person
 * named was added on screen, and each caption sits where it covers nothing it describes. Each step leaves a
 * screenshot; the whole tour is recorded as a WebM video (scripts/demo/recorder.ts). Everything lands in `outDir`,
 * with a README.txt listing it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { type Browser, chromium, type Locator, type Page } from '@playwright/test';
import { CHROMIUM_PATH, DESKTOP_VIEWPORT, fakeCameraArgs } from '../../e2e/helpers/browser.js';
import { type Lookout, REPO_ROOT, startLookout, TESTDATA } from '../../e2e/helpers/lookout.js';
import { makeZoomingCamera } from './camera.js';
import { showCaption } from './caption.js';
import { captureSameFrame } from './same-frame.js';
import { type Doubles, startDoubles } from './doubles.js';
import { groupPhotoFor, planTour, type StepSlug, type TourConfig } from './plan.js';
import { startRecording } from './recorder.js';
import { type ModelServer, modelServerEnv, objectDetectorSettled, remoteDetectionSettled, startModelServer } from './servers.js';

export interface DemoOptions {
  /** A visible browser window (needs a display: DISPLAY or WAYLAND_DISPLAY). Default: headless. */
  headed?: boolean;
  /** How long each step's caption stays after the step's outcome, in ms. Default 2500. */
  pauseMs?: number;
  /** Where the video, the screenshots and README.txt go (emptied of an earlier tour's files). Default demo-output/. */
  outDir?: string;
  /** A Lookout already running: toured as it is (Grace Hopper is added to it and it is trained again). */
  baseUrl?: string;
  /** More settings for the server the tour starts (ignored with baseUrl); the process environment is passed too. */
  env?: Record<string, string>;
  /**
   * Start the repo's PPE detector and language-model test doubles and point the server at them, so Safety and Chat
   * show their whole flow with canned answers, said so in their captions (ignored with baseUrl).
   */
  testDoubles?: boolean;
  /** Progress lines (default: none). */
  log?: (line: string) => void;
}

export interface DemoStep {
  n: number;
  slug: StepSlug;
  title: string;
  caption: string;
  /** What the step saw happen, in words. */
  outcome: string;
  screenshot: string;
  /** Square pixels of the step's subject under its caption (0: the caption found room beside it). */
  captionCovers: number;
}

export interface DemoResult {
  outDir: string;
  video: string;
  videoBytes: number;
  videoFrames: number;
  steps: DemoStep[];
  /** What the server toured could do, which chose the steps. */
  config: TourConfig;
  /** What the tour checked on screen, for its test. */
  seen: {
    trainedPerson: string;
    /** The people the server knew before the tour added anyone. */
    peopleBefore: string[];
    /** The people it knows at the end. */
    peopleAfter: string[];
    /** The name on the first face of the live camera once it was recognised. */
    liveName: string;
    /** The text of each face card of the group photo. */
    faceCards: string[];
    /** How the group photo's faces were found: `remote` (the model server) or `local` (the Haar cascade). */
    groupDetection: string;
    /** Share (0 to 1) of the group photo's height on screen in its step's screenshot (it was once scrolled past). */
    groupPhotoShown: number;
    /** Object classes listed for the photo. */
    objectLabels: string[];
    safety: string | null;
    chat: string | null;
  };
  durationMs: number;
}

/** The person trained from the camera, and the label Lookout stores them under. */
const PERSON_NAME = 'Grace Hopper';
const PERSON_LABEL = 'grace-hopper';
const CAMERA_PHOTO = 'faces/grace_hopper.jpg';
/** A street: a bus, cars and people, for the objects and the PPE check. */
const STREET_PHOTO = 'objects/pexels_double_decker_bus.jpg';
const CHAT_PHOTO = 'objects/pexels_double_decker_bus.jpg';
const CHAT_QUESTION = 'What is in this photo, and is anyone I know in it?';
/** Live recognition and the first model loads in the browser can take a while on a busy machine. */
const SLOW_MS = 90_000;
const VIDEO = 'tour.webm';

export const DEFAULT_OUT_DIR = path.join(REPO_ROOT, 'demo-output');

export async function runDemo(options: DemoOptions = {}): Promise<DemoResult> {
  const started = Date.now();
  const pauseMs = options.pauseMs ?? 2500;
  const outDir = path.resolve(options.outDir ?? DEFAULT_OUT_DIR);
  const log = options.log ?? (() => {});
  if (options.headed && !process.env.DISPLAY && !process.env.WAYLAND_DISPLAY) {
    throw new Error('--headed needs a display (DISPLAY or WAYLAND_DISPLAY is not set); run it headless, or under xvfb-run.');
  }
  prepareOutDir(outDir);

  let doubles: Doubles | null = null;
  let modelServer: ModelServer | null = null;
  let lookout: Lookout | null = null;
  let browser: Browser | null = null;
  // Ctrl+C during a headed show: still stop the servers and remove the temporary data.
  const interrupted = () => {
    void Promise.allSettled([browser?.close(), lookout?.close(), modelServer?.close(), doubles?.close()]).then(() => process.exit(130));
  };
  process.once('SIGINT', interrupted);
  try {
    let baseUrl = options.baseUrl?.replace(/\/+$/, '');
    if (!baseUrl) {
      if (!fs.existsSync(path.join(REPO_ROOT, 'dist/server/main.js'))) {
        throw new Error('dist/server/main.js is missing: run `npm run build` first (npm install does it once).');
      }
      log('Starting the face detection model server and Lookout on 127.0.0.1, with an empty data directory…');
      modelServer = await startModelServer();
      if (options.testDoubles) doubles = await startDoubles();
      lookout = await startLookout({ ...modelServerEnv(modelServer), ...doubles?.env, ...options.env });
      baseUrl = lookout.url;
      await objectDetectorSettled(baseUrl);
      await remoteDetectionSettled(baseUrl);
      log(`Lookout is at ${baseUrl}.`);
    }
    const config = await tourConfig(baseUrl);
    log(`Steps: ${planTour(config).join(', ')}.`);

    const camera = await makeZoomingCamera(path.join(TESTDATA, CAMERA_PHOTO));
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: fakeCameraArgs(camera), headless: !options.headed });
    const context = await browser.newContext({ viewport: DESKTOP_VIEWPORT });
    const page = await context.newPage();
    const video = path.join(outDir, VIDEO);
    const recording = await startRecording(page, video, DESKTOP_VIEWPORT);
    let stats = { frames: 0, bytes: 0 };

    const tour = new Tour(page, baseUrl, outDir, pauseMs, log, !!doubles, config);
    // The video is finished even when a step fails: it shows how far the tour got.
    const seen = await tour.run().finally(async () => {
      stats = await recording.stop();
      await context.close();
    });
    const result: DemoResult = {
      outDir,
      video,
      videoBytes: stats.bytes,
      videoFrames: stats.frames,
      steps: tour.steps,
      config,
      seen,
      durationMs: Date.now() - started,
    };
    writeIndex(result, baseUrl);
    return result;
  } finally {
    process.off('SIGINT', interrupted);
    await browser?.close();
    await lookout?.close(); // stops the server and removes its data directory
    await modelServer?.close();
    await doubles?.close();
  }
}

async function getJson<T>(url: string): Promise<T> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`GET ${url}: HTTP ${res.status}`);
  return (await res.json()) as T;
}

/** What the server can do now: the tour shows only that. */
async function tourConfig(baseUrl: string): Promise<TourConfig> {
  const [models, ppe, chat] = await Promise.all([
    getJson<{ remote_status?: string }>(`${baseUrl}/api/ready`),
    getJson<{ enabled: boolean; endpoint?: string | null; reachable: boolean }>(`${baseUrl}/api/ppe/status`),
    getJson<{ enabled: boolean; reachable?: boolean }>(`${baseUrl}/api/chat/status`),
  ]);
  return {
    remoteDetection: models.remote_status === 'connected',
    safety: ppe.enabled && !!ppe.endpoint && ppe.reachable,
    chat: chat.enabled && chat.reachable !== false,
  };
}

/** Removes what an earlier tour left (its screenshots, video and index), nothing else. */
function prepareOutDir(outDir: string): void {
  fs.mkdirSync(outDir, { recursive: true });
  for (const f of fs.readdirSync(outDir)) {
    if (/^\d\d-[a-z-]+\.png$/.test(f) || f === VIDEO || f === 'README.txt') fs.rmSync(path.join(outDir, f));
  }
}

class Tour {
  readonly steps: DemoStep[] = [];
  private readonly plan: StepSlug[];

  constructor(
    private readonly page: Page,
    private readonly url: string,
    private readonly outDir: string,
    private readonly pauseMs: number,
    private readonly log: (line: string) => void,
    private readonly doubles: boolean,
    private readonly config: TourConfig,
  ) {
    this.plan = planTour(config);
  }

  /**
   * Shows the caption, runs the step, shows the caption again with what happened, placed off the step's subject
   * (`act` returns the outcome and the locators it describes), keeps a screenshot, then lets the audience read.
   */
  private async step(
    slug: StepSlug,
    title: string,
    caption: string,
    act: () => Promise<{
      outcome: string;
      subjects: Locator[];
      beforeScreenshot?: () => Promise<void>;
      /** A live page: reads the outcome off the screen again, so caption and screenshot show the same frame (#36). */
      readOutcome?: () => Promise<string>;
    }>,
  ): Promise<string> {
    const n = this.steps.length + 1;
    if (this.plan[n - 1] !== slug)
      throw new Error(`the tour's steps are out of order: step ${n} is ${slug}, the plan says ${this.plan[n - 1]}`);
    const heading = `Step ${n} of ${this.plan.length}: ${title}`;
    this.log(heading);
    await showCaption(this.page, heading, caption);
    const {
      outcome: first,
      subjects,
      beforeScreenshot,
      readOutcome,
    } = await act().catch(async (err: unknown) => {
      // What the page showed when the step failed, beside the steps that worked.
      await this.page.screenshot({ path: path.join(this.outDir, `${String(n).padStart(2, '0')}-${slug}-failed.png`) }).catch(() => {});
      throw new Error(`step ${n} (${title}) failed: ${err instanceof Error ? err.message : String(err)}`);
    });
    // The step may have loaded a page (which drops the caption): show it again with what happened.
    let outcome = first;
    let captionCovers = await showCaption(this.page, heading, `${caption} ${outcome}`.trim(), subjects);
    const screenshot = path.join(this.outDir, `${String(n).padStart(2, '0')}-${slug}.png`);
    await beforeScreenshot?.();
    if (readOutcome) {
      // #36: the caption quotes the very frame of the screenshot (it once said 71% over a screen showing 78%).
      const kept = await captureSameFrame({
        read: readOutcome,
        show: async (text) => {
          captionCovers = await showCaption(this.page, heading, `${caption} ${text}`.trim(), subjects);
        },
        capture: async () => {
          await this.page.screenshot({ path: screenshot });
        },
      });
      outcome = kept.text;
      if (!kept.agreed) this.log('  (the screen kept changing: the caption quotes the frame read just before the screenshot)');
    } else {
      await this.page.screenshot({ path: screenshot });
    }
    this.steps.push({ n, slug, title, caption, outcome, screenshot, captionCovers });
    this.log(`  ${outcome}${captionCovers ? ` (the caption covers ${captionCovers} px² of what it describes)` : ''}`);
    await this.page.waitForTimeout(this.pauseMs);
    return outcome;
  }

  private async goto(route: string, heading: string | RegExp): Promise<void> {
    await this.page.goto(`${this.url}${route}`);
    await this.page.getByRole('heading', { name: heading, level: 1 }).waitFor();
  }

  private async api<T>(route: string, init?: RequestInit): Promise<T> {
    const res = await fetch(`${this.url}${route}`, init);
    if (!res.ok) throw new Error(`${init?.method ?? 'GET'} ${route}: HTTP ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  }

  private people(): Promise<string[]> {
    return this.api<{ labels: string[] }>('/api/labels').then((r) => r.labels);
  }

  private setDetection(method: 'local' | 'remote'): Promise<unknown> {
    return this.api('/api/models/detection', {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ method }),
    });
  }

  /** Scrolls `locator` near the top of the page, under the header where it stays on screen (room under it for the caption). */
  private async scrollToTop(locator: Locator): Promise<void> {
    await locator.first().evaluate((el) => {
      const doc = el.ownerDocument;
      const header = doc.querySelector('header');
      const stays = header && ['fixed', 'sticky'].includes(doc.defaultView?.getComputedStyle(header).position ?? '');
      const top = (stays ? header.getBoundingClientRect().bottom : 0) + 16;
      doc.defaultView?.scrollBy(0, el.getBoundingClientRect().top - top);
    });
  }

  async run(): Promise<DemoResult['seen']> {
    const page = this.page;
    const main = page.locator('main');
    const peopleBefore = await this.people();

    await this.goto('/', 'Dashboard');
    await this.step(
      'dashboard',
      'A first start',
      peopleBefore.length
        ? `Lookout's dashboard: the people it knows (${peopleBefore.join(', ')}) and what is ready.`
        : 'Lookout on its first start: it knows nobody yet. Everything in this tour runs on this machine.',
      async () => ({ outcome: '', subjects: [main.locator('h1, section, table, [data-testid^="indicator-"]')] }),
    );

    await this.goto('/training', 'Training');
    await this.step(
      'training-photos',
      'Teach it a person',
      `${PERSON_NAME}: type the name, take 3 photos with the camera, save them.`,
      async () => {
        const take = page.getByTestId('training-camera').getByRole('button', { name: 'Take photo' });
        await expectEnabled(take, SLOW_MS);
        await page.getByLabel('Person’s name').fill(PERSON_NAME);
        const thumbs = page.getByTestId('capture-thumb');
        for (let i = 1; i <= 3; i++) {
          // Until the camera has a new frame the shutter says "no picture yet": press it again a moment later.
          for (let attempt = 0; (await thumbs.count()) < i; attempt++) {
            if (attempt === 20) throw new Error(`photo ${i} was not taken`);
            await take.click();
            await thumbs
              .nth(i - 1)
              .waitFor({ timeout: 1000 })
              .catch(() => {});
          }
          // The demo camera zooms slowly: half a second later it shows a slightly different picture.
          await page.waitForTimeout(600);
        }
        await page.getByRole('button', { name: 'Save 3 photos' }).click();
        // Exactly "Saved": a substring match would count "Not saved yet" (the tour once trained before the uploads ended).
        await waitForCount(page, page.getByTestId('capture-status').filter({ hasText: /^\s*Saved\s*$/ }), 3, SLOW_MS);
        const tray = page.getByTestId('capture-tray');
        await this.scrollToTop(tray);
        return { outcome: 'Saved.', subjects: [tray, page.getByTestId('training-camera')] };
      },
    );

    await this.step('training-done', 'It learns', 'Train the model: it learns her face from the 3 photos, in seconds.', async () => {
      await page.getByRole('button', { name: 'Train the model' }).click();
      const finished = page.getByTestId('train-finished');
      await finished.waitFor({ timeout: SLOW_MS });
      const text = (await finished.innerText()).replace(/\s+/g, ' ');
      if (!/Training finished/.test(text)) throw new Error(`training did not finish: ${text}`);
      await this.scrollToTop(page.getByRole('button', { name: 'Train the model' }));
      // The summary's first sentence ("Lookout now knows 1 person, learnt from 3 faces ..."); its details stay on screen.
      const first = text.replace(/^Training finished\s*/, '').split(/(?<=\.)\s/)[0] ?? '';
      return { outcome: first, subjects: [finished, page.getByRole('button', { name: 'Train the model' })] };
    });

    await this.goto('/recognize', 'Live recognition');
    const group = groupPhotoFor(this.config);
    const detectionBefore = (await this.api<{ detection_method: 'local' | 'remote' }>('/api/models/config')).detection_method;
    let faceCards: string[] = [];
    let groupPhotoShown = 0;
    await this.step(
      'group-photo',
      'Strangers',
      group.detection === 'remote'
        ? 'A group photo, checked on the server: a face detection model server finds every face; none is anyone it was taught, so each is unknown.'
        : 'A group photo: each face gets a box and a card; none is anyone it was taught, so each is unknown.',
      async () => {
        if (group.detection === 'remote') {
          await this.setDetection('remote');
          await page.getByRole('radio', { name: 'On the server' }).check();
        }
        await page.getByRole('radio', { name: 'Photo' }).check();
        await page.getByLabel('Upload a photo').setInputFiles(path.join(TESTDATA, group.photo));
        await page.getByTestId('face-result').first().waitFor({ state: 'attached', timeout: SLOW_MS });
        // Unknown faces with the same reason are folded into one group: open them, to show each face.
        const folded = main.locator('details:not([open]) > summary');
        for (let i = 0; i < 10 && (await folded.count()) > 0; i++) await folded.first().click();
        // Three faces or more get a grid of face cards (the model server's four); fewer, a list beside the photo.
        const grid = page.getByTestId('face-grid');
        const cards = (await grid.count()) > 0 ? page.getByTestId('face-card') : page.getByTestId('face-result');
        faceCards = (await cards.allInnerTexts()).map((t) => t.replace(/\s+/g, ' '));
        // The photo with its boxes at the top of the screen, the cards under it where there is room: scrolled to the
        // cards, the shot once showed them without the photo they come from.
        const photo = main.locator('.analysis-frame');
        await this.scrollToTop(photo);
        groupPhotoShown = await shownShare(photo);
        return {
          outcome: `${faceCards.length} faces, ${faceCards.filter((c) => /unknown/i.test(c)).length} of them strangers.`,
          subjects: [photo, ...((await grid.count()) > 0 ? [grid] : [])],
        };
      },
    );
    // Back to the detection method the server had (the tour's own: local, the one her photos were trained with).
    if (group.detection !== detectionBefore) await this.setDetection(detectionBefore);

    await this.goto('/objects', 'Object detection');
    let objectLabels: string[] = [];
    await this.step('objects', 'Objects', 'Not only faces: a street photo, a box per object and a count per kind.', async () => {
      await page.getByRole('radio', { name: 'Photo' }).check();
      await page.getByLabel('Upload a photo').setInputFiles(path.join(TESTDATA, STREET_PHOTO));
      const names = page.getByTestId('object-summary').locator('.class-name');
      await waitForCount(page, names, 1, SLOW_MS, true);
      objectLabels = await names.evaluateAll((els) => els.map((e) => e.getAttribute('data-class') ?? ''));
      const frame = main.locator('.analysis-frame');
      await this.scrollToTop(frame);
      return { outcome: `Found: ${objectLabels.join(', ')}.`, subjects: [frame, page.getByTestId('object-summary')] };
    });

    let safety: string | null = null;
    if (this.config.safety) {
      await this.goto('/safety', 'Safety');
      safety = await this.step(
        'safety',
        'Safety',
        `Protective equipment: each person checked for what the site requires (hardhat, vest, goggles).${
          this.doubles ? ' (The detector here is the repo’s test double: its boxes are canned.)' : ''
        }`,
        async () => {
          await page.getByRole('radio', { name: 'Photo' }).check();
          await page.getByLabel('Upload a photo').setInputFiles(path.join(TESTDATA, STREET_PHOTO));
          const banner = page.getByTestId('safety-banner').filter({ hasText: /Compliant|Violation/ });
          await banner.waitFor({ timeout: SLOW_MS });
          // The banner starts with an icon character ("!" or a tick): the words are what the caption repeats.
          return {
            outcome: `${(await banner.innerText()).replace(/\s+/g, ' ').replace(/^[^A-Za-z]+/, '')}.`,
            subjects: [banner, main.locator('.analysis-frame')],
          };
        },
      );
    }

    let chat: string | null = null;
    if (this.config.chat) {
      await this.goto('/chat', 'Chat');
      chat = await this.step(
        'chat',
        'Chat',
        `Ask about a photo: Lookout analyses it and the language model answers from that.${
          this.doubles ? ' (The model here is the repo’s test double: its reply is canned.)' : ''
        }`,
        async () => {
          await page.getByLabel('Attach photo').setInputFiles(path.join(TESTDATA, CHAT_PHOTO));
          await page.getByLabel('Your question').fill(CHAT_QUESTION);
          await page.getByRole('button', { name: 'Send' }).click();
          const reply = page.locator('[data-testid="chat-reply"][data-state="done"]').last();
          await reply.waitFor({ timeout: SLOW_MS });
          // What Lookout found in the photo (the analysis the reply was written from), unfolded.
          await reply.getByTestId('chat-analysis').locator('summary').click();
          // The reply's words under the unfolded analysis: in view, beside the caption.
          await reply.locator('.chat-text').scrollIntoViewIfNeeded();
          return { outcome: `The reply: ${(await reply.locator('.chat-text').innerText()).trim()}`, subjects: [reply] };
        },
      );
    }

    await this.goto('/recognize', 'Live recognition');
    const liveName = await this.step(
      'recognize-live',
      'She is recognised',
      `A minute ago Lookout had never seen ${PERSON_NAME}. Three photos later, it names her live.`,
      async () => {
        // The group photo was checked on the server: back to the page's default, the browser (which may hand the
        // first frames to the server while its models load).
        await page.getByRole('radio', { name: 'In this browser' }).check();
        await page.getByRole('radio', { name: 'Camera' }).check();
        // Named, not merely her as the nearest of an unknown face.
        const face = page.locator('[data-testid="face-result"]:not([data-tone="unknown"])').filter({ hasText: PERSON_NAME }).first();
        await face.waitFor({ timeout: SLOW_MS });
        const stage = main.locator('.analysis-camera');
        await this.scrollToTop(stage);
        const read = async () => `${(await face.innerText()).replace(/\s+/g, ' ')}.`;
        return {
          outcome: await read(),
          subjects: [stage, face],
          // The screenshot at a frame where she is named (the overlay follows the camera, frame by frame).
          beforeScreenshot: () => face.waitFor({ timeout: SLOW_MS }),
          // Her figure moves with the camera's frames: the caption is read from the frame the screenshot shows.
          readOutcome: async () => {
            await face.waitFor({ timeout: SLOW_MS });
            return read();
          },
        };
      },
    );

    return {
      trainedPerson: PERSON_LABEL,
      peopleBefore,
      peopleAfter: await this.people(),
      liveName,
      faceCards,
      groupDetection: group.detection,
      groupPhotoShown,
      objectLabels,
      safety,
      chat,
    };
  }
}

/** The share of `locator`'s height inside the viewport now (0 to 1). */
async function shownShare(locator: Locator): Promise<number> {
  return locator.first().evaluate((el) => {
    const r = el.getBoundingClientRect();
    const height = el.ownerDocument.defaultView?.innerHeight ?? 0;
    const seen = Math.min(r.bottom, height) - Math.max(r.top, 0);
    return r.height > 0 ? Math.max(0, seen) / r.height : 0;
  });
}

async function expectEnabled(locator: import('@playwright/test').Locator, timeout: number): Promise<void> {
  const deadline = Date.now() + timeout;
  while (!(await locator.isEnabled().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`${locator} did not become enabled`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Waits until `locator` matches `count` elements (or at least that many). */
async function waitForCount(page: Page, locator: import('@playwright/test').Locator, count: number, timeout: number, atLeast = false) {
  const deadline = Date.now() + timeout;
  for (;;) {
    const n = await locator.count();
    if (atLeast ? n >= count : n === count) return;
    if (Date.now() > deadline) throw new Error(`expected ${atLeast ? 'at least ' : ''}${count} of ${locator}, found ${n}`);
    await page.waitForTimeout(100);
  }
}

function writeIndex(r: DemoResult, baseUrl: string): void {
  const lines = [
    'Lookout demo tour (npm run demo)',
    `Recorded ${new Date().toISOString()} against ${baseUrl}, in ${(r.durationMs / 1000).toFixed(1)} s.`,
    `People known before the tour: ${r.seen.peopleBefore.join(', ') || 'nobody'}; taught from the camera: ${r.seen.trainedPerson}.`,
    `Shown as this server is configured: ${r.config.remoteDetection ? 'face detection on the model server' : 'no model server'}, ${
      r.config.safety ? 'a PPE detector' : 'no PPE detector (Safety left out)'
    }, ${r.config.chat ? 'a language model' : 'no language model (Chat left out)'}.`,
    '',
    `${VIDEO}: the whole tour (WebM, VP8, ${(r.videoBytes / 1e6).toFixed(1)} MB; open it in a browser or VLC).`,
    '',
    ...r.steps.map((s) => `${path.basename(s.screenshot)}  Step ${s.n}, ${s.title}: ${s.caption}${s.outcome ? ` ${s.outcome}` : ''}`),
    '',
  ];
  fs.writeFileSync(path.join(r.outDir, 'README.txt'), lines.join('\n'));
}
