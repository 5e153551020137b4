/**
 * The captioned tour of Lookout (`npm run demo`, issue #18 item 8): the real server (started on 127.0.0.1 with a
 * fresh data directory and sample people, unless a URL is given) and Chromium with a fake camera, going through
 * the pages as a person would: the dashboard, training a new person from the camera, live recognition naming them,
 * a group photo's face cards, objects in a photo, the Safety page and Chat (each as the server is configured),
 * then a summary. Each step shows a caption for `pauseMs` and leaves a screenshot; the whole tour is recorded as
 * a WebM video (scripts/demo/recorder.ts). Everything lands in `outDir`, with a README.txt listing it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { type Browser, chromium, type Page } from '@playwright/test';
import { CHROMIUM_PATH, DESKTOP_VIEWPORT, fakeCameraArgs } from '../../e2e/helpers/browser.js';
import { type Lookout, REPO_ROOT, startLookout, TESTDATA } from '../../e2e/helpers/lookout.js';
import { makeZoomingCamera } from './camera.js';
import { type Doubles, startDoubles } from './doubles.js';
import { showCaption } from './caption.js';
import { startRecording } from './recorder.js';
import { objectDetectorSettled, SAMPLE_PEOPLE, seedSamplePeople } from './seed.js';

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
   * show their whole flow with canned answers (ignored with baseUrl).
   */
  testDoubles?: boolean;
  /** Progress lines (default: none). */
  log?: (line: string) => void;
}

export interface DemoStep {
  n: number;
  slug: string;
  title: string;
  caption: string;
  /** What the step saw happen, in words. */
  outcome: string;
  screenshot: string;
}

export interface DemoResult {
  outDir: string;
  video: string;
  videoBytes: number;
  videoFrames: number;
  steps: DemoStep[];
  /** What the tour checked on screen, for its test. */
  seen: {
    trainedPerson: string;
    /** The name on the first face of the live camera once it was recognised. */
    liveName: string;
    /** The text of each face card of the group photo. */
    faceCards: string[];
    /** Object classes listed for the photo. */
    objectLabels: string[];
    safety: string;
    chat: string;
  };
  durationMs: number;
}

/** The person trained from the camera, and the label Lookout stores them under. */
const PERSON_NAME = 'Grace Hopper';
const PERSON_LABEL = 'grace-hopper';
const CAMERA_PHOTO = 'faces/grace_hopper.jpg';
/** A group photo in which the Haar cascade finds 7 faces. */
const GROUP_PHOTO = 'faces/sample5.jpg';
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
  let lookout: Lookout | null = null;
  let browser: Browser | null = null;
  // Ctrl+C during a headed show: still stop the server and remove its temporary data.
  const interrupted = () => {
    void Promise.allSettled([browser?.close(), lookout?.close(), doubles?.close()]).then(() => process.exit(130));
  };
  process.once('SIGINT', interrupted);
  try {
    let baseUrl = options.baseUrl?.replace(/\/+$/, '');
    if (!baseUrl) {
      if (!fs.existsSync(path.join(REPO_ROOT, 'dist/server/main.js'))) {
        throw new Error('dist/server/main.js is missing: run `npm run build` first (npm install does it once).');
      }
      log('Starting Lookout on 127.0.0.1 with a fresh data directory…');
      if (options.testDoubles) doubles = await startDoubles();
      lookout = await startLookout({ ...doubles?.env, ...options.env });
      baseUrl = lookout.url;
      log(`Lookout is at ${baseUrl}; adding and training the sample people…`);
      await seedSamplePeople(baseUrl);
      await objectDetectorSettled(baseUrl);
    }

    const camera = await makeZoomingCamera(path.join(TESTDATA, CAMERA_PHOTO));
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: fakeCameraArgs(camera), headless: !options.headed });
    const context = await browser.newContext({ viewport: DESKTOP_VIEWPORT });
    const page = await context.newPage();
    const video = path.join(outDir, VIDEO);
    const recording = await startRecording(page, video, DESKTOP_VIEWPORT);
    let stats = { frames: 0, bytes: 0 };

    const tour = new Tour(page, baseUrl, outDir, pauseMs, log, !!doubles);
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
      seen,
      durationMs: Date.now() - started,
    };
    writeIndex(result, baseUrl);
    return result;
  } finally {
    process.off('SIGINT', interrupted);
    await browser?.close();
    await lookout?.close(); // stops the server and removes its data directory
    await doubles?.close();
  }
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
  private readonly total = 9;

  constructor(
    private readonly page: Page,
    private readonly url: string,
    private readonly outDir: string,
    private readonly pauseMs: number,
    private readonly log: (line: string) => void,
    private readonly doubles: boolean,
  ) {}

  /** Shows the caption, runs the step, keeps a screenshot, then lets the audience read. */
  private async step(slug: string, title: string, caption: string, act: () => Promise<string>): Promise<string> {
    const n = this.steps.length + 1;
    const heading = `Step ${n} of ${this.total}: ${title}`;
    this.log(`${heading}`);
    await showCaption(this.page, heading, caption);
    const outcome = await act().catch(async (err: unknown) => {
      // What the page showed when the step failed, beside the steps that worked.
      await this.page.screenshot({ path: path.join(this.outDir, `${String(n).padStart(2, '0')}-${slug}-failed.png`) }).catch(() => {});
      throw new Error(`step ${n} (${title}) failed: ${err instanceof Error ? err.message : String(err)}`);
    });
    // The step may have loaded a page (which drops the caption): show it again with what happened.
    await showCaption(this.page, heading, `${caption} ${outcome}`.trim());
    const screenshot = path.join(this.outDir, `${String(n).padStart(2, '0')}-${slug}.png`);
    await this.page.screenshot({ path: screenshot });
    this.steps.push({ n, slug, title, caption, outcome, screenshot });
    this.log(`  ${outcome}`);
    await this.page.waitForTimeout(this.pauseMs);
    return outcome;
  }

  private async goto(route: string, heading: string | RegExp): Promise<void> {
    await this.page.goto(`${this.url}${route}`);
    await this.page.getByRole('heading', { name: heading, level: 1 }).waitFor();
  }

  private async api<T>(route: string): Promise<T> {
    const res = await fetch(`${this.url}${route}`);
    if (!res.ok) throw new Error(`GET ${route}: HTTP ${res.status}`);
    return (await res.json()) as T;
  }

  async run(): Promise<DemoResult['seen']> {
    const page = this.page;
    const people = () => this.api<{ labels: string[] }>('/api/labels').then((r) => r.labels.join(', ') || 'nobody yet');

    await this.goto('/', 'Dashboard');
    await this.step(
      'dashboard',
      'Dashboard',
      `Lookout's dashboard: whether the model is trained, how faces are found, the object detector, and the people it knows (${await people()}).`,
      async () => {
        const trained = page.getByTestId('indicator-trained');
        await trained.waitFor();
        // "Model" over its state: one line, "Model: Trained".
        return `${(await trained.innerText())
          .trim()
          .replace(/\s*\n\s*/, ': ')
          .replace(/\s+/g, ' ')}.`;
      },
    );

    await this.goto('/training', 'Training');
    await this.step(
      'training-photos',
      'Training: photos from the camera',
      `A new person, ${PERSON_NAME}: type the name, take 3 photos with the camera (turning a little between them), and save them.`,
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
        await waitForCount(page, page.getByTestId('capture-status').filter({ hasText: 'Saved' }), 3, SLOW_MS);
        await page.getByTestId('capture-tray').scrollIntoViewIfNeeded();
        return `Saved 3 photos as ${PERSON_LABEL}.`;
      },
    );

    await this.step(
      'training-done',
      'Training: the model learns',
      'Train the model: a progress bar image by image, then a summary of who was learnt, from how many faces.',
      async () => {
        await page.getByRole('button', { name: 'Train the model' }).click();
        const finished = page.getByTestId('train-finished');
        await finished.waitFor({ timeout: SLOW_MS });
        const text = (await finished.innerText()).replace(/\s+/g, ' ');
        if (!/Training finished/.test(text)) throw new Error(`training did not finish: ${text}`);
        return text.replace(/^Training finished\s*/, '');
      },
    );

    await this.goto('/recognize', 'Live recognition');
    const liveName = await this.step(
      'recognize-live',
      'Live recognition',
      `The camera, live: each face gets a box with a name and a confidence. ${PERSON_NAME} is recognised now.`,
      async () => {
        const face = page.getByTestId('face-result').filter({ hasText: PERSON_NAME }).first();
        await face.waitFor({ timeout: SLOW_MS });
        return `Seen: ${(await face.innerText()).replace(/\s+/g, ' ')}.`;
      },
    );

    let faceCards: string[] = [];
    await this.step(
      'group-photo',
      'A group photo',
      'A photo instead of the camera: a group gets a box per face and a grid of face cards (these people are not in the model, so they are unknown, with the reason).',
      async () => {
        await page.getByRole('radio', { name: 'Photo' }).check();
        await page.getByLabel('Upload a photo').setInputFiles(path.join(TESTDATA, GROUP_PHOTO));
        await page.getByTestId('face-grid').waitFor({ timeout: SLOW_MS });
        const cards = page.getByTestId('face-card');
        await waitForCount(page, cards, 3, SLOW_MS, true);
        // Unknown faces with the same reason are folded into one group: open them, to show each card.
        for (const summary of await page.getByTestId('face-grid').locator('details:not([open]) > summary').all()) await summary.click();
        await cards.first().scrollIntoViewIfNeeded();
        faceCards = (await cards.allInnerTexts()).map((t) => t.replace(/\s+/g, ' '));
        return `${faceCards.length} face cards.`;
      },
    );

    await this.goto('/objects', 'Object detection');
    let objectLabels: string[] = [];
    await this.step('objects', 'Objects', 'Object detection on a street photo: a box per object and a count per class.', async () => {
      await page.getByRole('radio', { name: 'Photo' }).check();
      await page.getByLabel('Upload a photo').setInputFiles(path.join(TESTDATA, STREET_PHOTO));
      const names = page.getByTestId('object-summary').locator('.class-name');
      await waitForCount(page, names, 1, SLOW_MS, true);
      objectLabels = await names.evaluateAll((els) => els.map((e) => e.getAttribute('data-class') ?? ''));
      return `Found: ${objectLabels.join(', ')}.`;
    });

    await this.goto('/safety', 'Safety');
    const ppe = await this.api<{ enabled: boolean; endpoint?: string | null; reachable: boolean }>('/api/ppe/status');
    const safety = await this.step(
      'safety',
      'Safety (protective equipment)',
      ppe.enabled && ppe.endpoint
        ? `The Safety page checks each person for the protective equipment the site requires (hardhat, vest, goggles), on the camera or a photo.${
            this.doubles ? ' (The detector here is the repo’s test double: its boxes are canned.)' : ''
          }`
        : 'The Safety page checks each person for protective equipment once a PPE detector is configured (PPE_ENABLED=true and PPE_ENDPOINT); this server has none, and the page says so.',
      async () => {
        if (ppe.enabled && ppe.endpoint) {
          await page.getByRole('radio', { name: 'Photo' }).check();
          await page.getByLabel('Upload a photo').setInputFiles(path.join(TESTDATA, STREET_PHOTO));
          const banner = page.getByTestId('safety-banner').filter({ hasText: /Compliant|Violation/ });
          await banner.waitFor({ timeout: SLOW_MS });
          // The banner starts with an icon character ("!" or a tick): the words are what the caption repeats.
          return `${(await banner.innerText()).replace(/\s+/g, ' ').replace(/^[^A-Za-z]+/, '')}.`;
        }
        const shown = page.locator('[data-testid="safety-disabled"], [data-testid="safety-not-configured"]').first();
        await shown.waitFor();
        return `The page shows: ${(await shown.innerText()).split('\n')[0]}.`;
      },
    );

    await this.goto('/chat', 'Chat');
    const chatStatus = await this.api<{ enabled: boolean; reason?: string }>('/api/chat/status');
    const chat = await this.step(
      'chat',
      'Chat',
      chatStatus.enabled
        ? `Chat: ask about a photo. Lookout analyses it (faces, objects) and the language model answers from that: “${CHAT_QUESTION}”${
            this.doubles ? ' (The model here is the repo’s test double: its reply is canned.)' : ''
          }`
        : 'Chat is off on this server: no language model is configured (set CHAT_ENDPOINT to an OpenAI-compatible server, or CHAT_MODEL_PATH to a GGUF file, and run the demo again).',
      async () => {
        if (!chatStatus.enabled) {
          const status = page.getByTestId('chat-status');
          await status.waitFor();
          return `The page shows: ${(await status.innerText()).split('\n')[0]}.`;
        }
        await page.getByLabel('Attach photo').setInputFiles(path.join(TESTDATA, CHAT_PHOTO));
        await page.getByLabel('Your question').fill(CHAT_QUESTION);
        await page.getByRole('button', { name: 'Send' }).click();
        const reply = page.locator('[data-testid="chat-reply"][data-state="done"]').last();
        await reply.waitFor({ timeout: SLOW_MS });
        // What Lookout found in the photo (the analysis the reply was written from), unfolded.
        await reply.getByTestId('chat-analysis').locator('summary').click();
        return `The reply: ${(await reply.locator('.chat-text').innerText()).trim()}`;
      },
    );

    await this.goto('/', 'Dashboard');
    await this.step(
      'summary',
      'That was Lookout',
      `It learnt ${PERSON_NAME} from three camera photos and named her live, found ${faceCards.length} faces in a group photo and ${objectLabels.length} kinds of object in a street, ${
        ppe.enabled && ppe.endpoint ? 'checked protective equipment' : 'showed the Safety page without a PPE detector'
      }, and ${chatStatus.enabled ? 'answered a question about a photo' : 'showed that chat is off'}. People known now: ${await people()}.`,
      async () => '',
    );

    return { trainedPerson: PERSON_LABEL, liveName, faceCards, objectLabels, safety, chat };
  }
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
    `Sample people: ${SAMPLE_PEOPLE.map((p) => `${p.label} (${p.photo})`).join(', ')}; trained from the camera: ${r.seen.trainedPerson}.`,
    '',
    `${VIDEO}: the whole tour (WebM, VP8, ${(r.videoBytes / 1e6).toFixed(1)} MB; open it in a browser or VLC).`,
    '',
    ...r.steps.map((s) => `${path.basename(s.screenshot)}  Step ${s.n}, ${s.title}: ${s.caption}${s.outcome ? ` ${s.outcome}` : ''}`),
    '',
  ];
  fs.writeFileSync(path.join(r.outDir, 'README.txt'), lines.join('\n'));
}
