/**
 * The chat page against the real server, whose language model is the OpenAI-compatible TEST DOUBLE from
 * test/helpers/openai-double.ts (canned, streamed replies; it records what it was asked). Photos come from a
 * file and from Chromium's fake camera playing a test photo.
 */
import path from 'node:path';
import { checkAccessibility, expect, test, type Page } from './helpers/fixtures.js';
import { startOpenAIDouble, type OpenAIDouble } from '../test/helpers/openai-double.js';
import { CHROMIUM_PATH, fakeCameraArgs, PHONE_VIEWPORT } from './helpers/browser.js';
import { makeFakeCamera } from './helpers/fake-camera.js';
import { screenshot, startLookout, TESTDATA, type Lookout } from './helpers/lookout.js';

const y4m = await makeFakeCamera('faces/grace_hopper.jpg');
test.use({ launchOptions: { executablePath: CHROMIUM_PATH, args: fakeCameraArgs(y4m) } });

const PIECES = ['Lookout sees ', 'one person, ', 'not recognised.'];
const REPLY = PIECES.join('');

let double: OpenAIDouble;
let lookout: Lookout;

test.beforeAll(async () => {
  double = await startOpenAIDouble({ pieces: PIECES, reply: REPLY });
  lookout = await startLookout({ CHAT_ENDPOINT: double.url });
  // The photo analysis includes objects: wait for the object detector to finish loading in the background.
  const deadline = Date.now() + 60_000;
  for (;;) {
    const ready = (await (await fetch(`${lookout.url}/api/ready`)).json()) as { object_detection_state: string };
    if (ready.object_detection_state !== 'loading') break;
    if (Date.now() > deadline) throw new Error(`the object detector did not load:\n${lookout.output()}`);
    await new Promise((r) => setTimeout(r, 250));
  }
});
test.afterAll(async () => {
  await lookout?.close();
  await double?.close();
});
test.beforeEach(() => {
  double.mode = 'ok';
  double.stallAfterPieces = null;
});

/** The latest user turn the double was sent (the server's prompt puts the analysis and the question there). */
function lastPrompt(): { content: string; stream: unknown } {
  const body = double.completions().at(-1)?.body as { messages: { role: string; content: string }[]; stream?: unknown };
  return { content: body.messages.filter((m) => m.role === 'user').at(-1)!.content, stream: body.stream };
}

async function openChat(page: Page) {
  await page.goto(`${lookout.url}/chat`);
  await expect(page.getByRole('heading', { name: 'Chat' })).toBeVisible();
  // The endpoint is checked at start; the page names the model once the check answered.
  await expect(page.getByTestId('chat-status')).toContainText('double-model');
}

test('a question gets a reply that streams in; Enter sends, Shift+Enter starts a new line', async ({ page }) => {
  await openChat(page);
  await expect(page.getByText('No messages yet')).toBeVisible();
  const box = page.getByLabel('Your question');

  await box.fill('First line');
  await box.press('Shift+Enter');
  await box.pressSequentially('second line');
  await expect(box).toHaveValue('First line\nsecond line');
  await expect(page.getByTestId('chat-user-message')).toHaveCount(0);

  await box.fill('Hello, what can you do?');
  await box.press('Enter');
  const question = page.getByTestId('chat-user-message').last();
  await expect(question).toContainText('You');
  await expect(question).toContainText('Hello, what can you do?');
  await expect(box).toHaveValue('');
  const reply = page.getByTestId('chat-reply').last();
  await expect(reply).toContainText('Lookout');
  await expect(reply).toContainText(REPLY);
  await expect(reply).toHaveAttribute('data-state', 'done');
  // The finished reply goes to the live region, for screen readers.
  await expect(page.getByTestId('chat-announcer')).toHaveText(`Lookout: ${REPLY}`);
  // No photo: no analysis panel; the double got the question, streamed.
  await expect(reply.getByTestId('chat-analysis')).toHaveCount(0);
  expect(lastPrompt().content).toContain('Hello, what can you do?');
  expect(lastPrompt().stream).toBe(true);

  // A reply that stalls shows what came so far, "Thinking" gives way to the text, and Stop ends it.
  double.stallAfterPieces = 1;
  await box.fill('Tell me more');
  await page.getByRole('button', { name: 'Send' }).click();
  const partial = page.getByTestId('chat-reply').last();
  await expect(partial).toHaveAttribute('data-state', 'streaming');
  await expect(partial).toContainText(PIECES[0]!.trim());
  await expect(partial).not.toContainText(PIECES[1]!.trim());
  await page.getByRole('button', { name: 'Stop' }).click();
  await expect(partial).toContainText('Stopped before the reply was complete.');
  await expect(page.getByRole('button', { name: 'Send' })).toBeVisible();

  // A slow model: "Thinking…" until the first words come; stopping then keeps the question, with no reply.
  double.stallAfterPieces = null;
  double.mode = 'slow';
  double.delayMs = 10_000;
  await box.fill('Are you slow?');
  await box.press('Enter');
  const waiting = page.getByTestId('chat-reply').last();
  await expect(waiting).toContainText('Thinking…');
  await page.getByRole('button', { name: 'Stop' }).click();
  await expect(waiting).toContainText('Stopped before Lookout answered.');
  await expect(waiting).not.toContainText('Thinking…');
  double.mode = 'ok';

  // The conversation survives a visit to another page; "New conversation" clears it.
  await page.getByRole('link', { name: 'Dashboard' }).click();
  await expect(page.getByRole('heading', { name: 'Dashboard' })).toBeVisible();
  await page.getByRole('link', { name: 'Chat' }).click();
  await expect(page.getByTestId('chat-user-message')).toHaveCount(3);
  await expect(page.getByTestId('chat-reply').first()).toContainText(REPLY);
  await page.getByRole('button', { name: 'New conversation' }).click();
  await expect(page.getByTestId('chat-user-message')).toHaveCount(0);
  await expect(page.getByText('No messages yet')).toBeVisible();
});

test('a question about an attached photo shows what Lookout found and sends it to the model', async ({ page }) => {
  await openChat(page);
  const fileInput = page.getByLabel('Attach photo');

  // A photo can be removed again before sending.
  await fileInput.setInputFiles(path.join(TESTDATA, 'objects/chelsea.png'));
  await expect(page.getByRole('img', { name: 'Photo to send: chelsea.png' })).toBeVisible();
  await page.getByRole('button', { name: 'Remove the photo' }).click();
  await expect(page.getByTestId('chat-attachment')).toHaveCount(0);

  await fileInput.setInputFiles(path.join(TESTDATA, 'faces/grace_hopper.jpg'));
  await expect(page.getByRole('img', { name: 'Photo to send: grace_hopper.jpg' })).toBeVisible();
  await page.getByLabel('Your question').fill('Who is in this photo?');
  await page.getByRole('button', { name: 'Send' }).click();
  await expect(page.getByTestId('chat-attachment')).toHaveCount(0);

  const question = page.getByTestId('chat-user-message').last();
  await expect(question.getByRole('img', { name: 'Photo grace_hopper.jpg' })).toBeVisible();
  const reply = page.getByTestId('chat-reply').last();
  await expect(reply).toHaveAttribute('data-state', 'done');
  await expect(reply).toContainText(REPLY);

  // The analysis the reply was made from: folded away until opened.
  const analysis = reply.getByTestId('chat-analysis');
  await expect(analysis).toContainText(/What Lookout found in the photo \(1 face, \d+ objects?\)/);
  await analysis.getByText('What Lookout found in the photo').click();
  await expect(analysis.getByText('Unknown person (not recognised)')).toBeVisible();
  await expect(analysis.getByRole('listitem').filter({ hasText: /^person × 1$/ })).toBeVisible();
  await expect(analysis.getByText('Face detection method: local')).toBeVisible();
  await expect(analysis.getByRole('img', { name: /What Lookout analysed/ })).toBeVisible();

  // What the language model was asked: Lookout's analysis of the photo, then the question.
  const prompt = lastPrompt().content;
  expect(prompt).toContain('Who is in this photo?');
  expect(prompt).toContain('Image analysis by Lookout');
  expect(prompt).toContain('1 face detected, 0 recognised, 1 unknown');
  expect(prompt).toMatch(/Objects: .*person 1/);

  // The conversation scrolls inside its box: show its end, the reply under the opened analysis.
  const toEnd = () => page.getByTestId('chat-log').evaluate((el) => (el.scrollTop = el.scrollHeight));
  await toEnd();
  await checkAccessibility(page, 'chat');
  await screenshot(page, 'chat-desktop');
  await page.setViewportSize(PHONE_VIEWPORT);
  await expect(page.getByRole('button', { name: 'Send' })).toBeVisible();
  await toEnd();
  await screenshot(page, 'chat-phone');
});

test('a photo from the camera can be sent with a question', async ({ page }) => {
  await openChat(page);
  const toggle = page.getByRole('button', { name: 'Use camera' });
  await toggle.click();
  await expect(toggle).toHaveAttribute('aria-pressed', 'true');
  await expect(page.getByLabel('Camera preview')).toBeVisible();
  const take = page.getByRole('button', { name: 'Take photo' });
  await expect(take).toBeEnabled();
  await take.click();
  await expect(page.getByRole('img', { name: 'Photo from the camera, to send' })).toBeVisible();

  // Nothing typed: a photo alone asks what is in it.
  await page.getByRole('button', { name: 'Send' }).click();
  await expect(page.getByTestId('chat-user-message').last()).toContainText('What do you see in this photo?');
  const reply = page.getByTestId('chat-reply').last();
  await expect(reply).toHaveAttribute('data-state', 'done');
  await expect(reply.getByTestId('chat-analysis')).toContainText(/\(1 face, \d+ objects?\)/);
  expect(lastPrompt().content).toContain('What do you see in this photo?');

  await toggle.click();
  await expect(page.getByLabel('Camera preview')).toHaveCount(0);
});

test('a failing language model gives a readable error', async ({ page }) => {
  await openChat(page);
  double.mode = 'error500';
  await page.getByLabel('Your question').fill('Are you there?');
  await page.getByRole('button', { name: 'Send' }).click();
  const reply = page.getByTestId('chat-reply').last();
  await expect(reply).toHaveAttribute('data-state', 'error');
  await expect(reply).toContainText('The language model sent an answer Lookout could not use.');
  await expect(reply).toContainText('HTTP 500');
  await expect(page.getByTestId('chat-announcer')).toContainText('Lookout could not answer.');
  // Nothing is stuck: once the model answers again, so does chat.
  double.mode = 'ok';
  await page.getByLabel('Your question').fill('And now?');
  await page.getByRole('button', { name: 'Send' }).click();
  await expect(page.getByTestId('chat-reply').last()).toContainText(REPLY);
});

test('chat switched off, or with no language model, says so and cannot be used', async ({ page }) => {
  const light = { EMBEDDING_ENABLED: 'false', OBJECT_DETECTION_ENABLED: 'false' };
  const off = await startLookout({ ...light, CHAT_ENABLED: 'false', CHAT_ENDPOINT: double.url });
  try {
    await page.goto(`${off.url}/chat`);
    await expect(page.getByTestId('chat-status')).toContainText('Chat is switched off on this server');
    await expect(page.getByLabel('Your question')).toBeDisabled();
    await expect(page.getByRole('button', { name: 'Send' })).toBeDisabled();
  } finally {
    await off.close();
  }
  const none = await startLookout(light);
  try {
    // While the page still asks whether chat can answer, the box takes no question either (#36: it was open, with
    // Send greyed, until the answer said there is no language model).
    let answerStatus = () => {};
    const held = new Promise<void>((resolve) => {
      answerStatus = resolve;
    });
    await page.route('**/api/chat/status', async (route) => {
      await held;
      await route.continue();
    });
    await page.goto(`${none.url}/chat`);
    await expect(page.getByText('Checking whether chat is available…')).toBeVisible();
    await expect(page.getByLabel('Your question')).toBeDisabled();
    answerStatus();
    const status = page.getByTestId('chat-status');
    await expect(status).toContainText('Chat has no language model to write its replies');
    await expect(page.getByLabel('Your question')).toBeDisabled();
    await expect(page.getByRole('button', { name: 'Send' })).toBeDisabled();
    // Plain words for whoever uses the page; the settings' names only behind "For whoever runs this server".
    expect(await status.innerText()).not.toMatch(/CHAT_/);
    const setup = page.getByTestId('chat-status-setup');
    await setup.getByText('For whoever runs this server').click();
    await expect(setup).toContainText('CHAT_ENDPOINT');
    await expect(setup).toContainText('CHAT_MODEL_PATH');
    await checkAccessibility(page, 'chat-no-model');
    await page.unroute('**/api/chat/status');
  } finally {
    await none.close();
  }
});

test('a language model that does not answer its check is a warning, and questions can still be sent', async ({ page }) => {
  // Port 2 refuses connections and nothing in the run can take it (servers here listen on ports the system picks,
  // never below 1024); fetch also allows it (port 1 is on its blocked list). A stopped double's freed port could be
  // taken by another worker's server before the question is sent: a CI run got another server's answer.
  const down = await startLookout({ EMBEDDING_ENABLED: 'false', OBJECT_DETECTION_ENABLED: 'false', CHAT_ENDPOINT: 'http://127.0.0.1:2' });
  try {
    await page.goto(`${down.url}/chat`);
    const status = page.getByTestId('chat-status');
    await expect(status).toContainText('The language model did not answer its last check');
    await expect(status).toContainText('refused the connection');
    await page.getByLabel('Your question').fill('Hello?');
    await page.getByRole('button', { name: 'Send' }).click();
    const reply = page.getByTestId('chat-reply').last();
    await expect(reply).toHaveAttribute('data-state', 'error');
    await expect(reply).toContainText('The language model cannot be reached.');
  } finally {
    await down.close();
  }
});
