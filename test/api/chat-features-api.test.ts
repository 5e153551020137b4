/**
 * The chat analysis' facial features (issue #19 item 3) over real HTTP: `count` and per-face `features` in the
 * answer and the streamed `analysis` event, and the same facts in the prompt an OpenAI-compatible TEST DOUBLE on
 * 127.0.0.1 receives. The features' OpenCV parity is checked in shared/vision/facial-features.test.ts; here a PNG
 * (decoded identically by sharp and OpenCV) must give exactly the fixture's features.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatFace } from '../../shared/api/index.js';
import { base64 } from '../helpers/faces.js';
import { parseSse } from '../helpers/contract.js';
import { startOpenAIDouble, type OpenAIDouble } from '../helpers/openai-double.js';
import { postJson, readTestImage, REPO_ROOT, startTestServer, type TestServer } from '../helpers/test-server.js';
import { withOriginalNames } from '../../shared/vision/facial-features.js';

let llm: OpenAIDouble;
let server: TestServer;

const fixture = JSON.parse(readFileSync(path.join(REPO_ROOT, 'test/fixtures/opencv/features/features.json'), 'utf8')) as {
  faces: { image: string; box: number[]; features: ChatFace['features'] }[];
};

beforeAll(async () => {
  llm = await startOpenAIDouble();
  server = await startTestServer({ CHAT_ENDPOINT: llm.url, CHAT_MODEL: 'double-model', CHAT_CHECK_INTERVAL_MS: '300' });
});

afterAll(async () => {
  await server?.close();
  await llm?.close();
});

/** The user turn the LLM double received for the request made after `before` requests. */
function promptSent(before: number): string {
  const body = llm.completions()[before].body as { messages: { role: string; content: string }[] };
  return body.messages.find((m) => m.role === 'user')!.content;
}

async function ask(image: string, message: string) {
  const before = llm.completions().length;
  const res = await postJson(`${server.url}/api/chat`, { message, image: base64(await readTestImage(image)) });
  expect(res.status).toBe(200);
  return { analysis: res.body.analysis as { count: number; faces: ChatFace[] }, prompt: promptSent(before) };
}

describe('POST /api/chat: facial features', () => {
  it('a PNG: count, and the features OpenCV gives for the face (eyes, smile), in the answer and the prompt', async () => {
    const { analysis, prompt } = await ask('faces/astronaut.png', 'Is she smiling?');
    const want = fixture.faces.find((f) => f.image === 'faces/astronaut.png')!;
    expect(analysis.count).toBe(1);
    expect(analysis.faces).toHaveLength(1);
    const [face] = analysis.faces;
    expect([face.x, face.y, face.w, face.h]).toEqual(want.box);
    // The fixture's features (OpenCV's) and the server's profile cascade's verdict (test/api/profile-face-api.test.ts).
    expect(face.features).toEqual({ ...withOriginalNames(want.features, face), profile_face: true });
    expect(face.features).toMatchObject({ eyes: 2, smiling: true, eyeglasses: false, face_too_small: false });
    expect(prompt).toContain('eyes seen: 2; smiling: yes; eyeglasses: no');
    expect(prompt).toContain('Is she smiling?');
  });

  it('Grace Hopper wears eyeglasses: the prompt says so, so "is the person wearing glasses?" can be answered', async () => {
    const { analysis, prompt } = await ask('faces/grace_hopper.jpg', 'Is the person wearing glasses?');
    expect(analysis.count).toBe(1);
    expect(analysis.faces[0].features).toMatchObject({ eyeglasses: true, eyes: 2, face_too_small: false });
    expect(analysis.faces[0].features.eye_boxes).toHaveLength(2);
    // The eye boxes are in image pixels, inside the face's upper half.
    for (const e of analysis.faces[0].features.eye_boxes) {
      const f = analysis.faces[0];
      expect(e.x).toBeGreaterThanOrEqual(f.x);
      expect(e.y).toBeGreaterThanOrEqual(f.y);
      expect(e.x + e.w).toBeLessThanOrEqual(f.x + f.w);
      expect(e.y + e.h).toBeLessThanOrEqual(f.y + f.h / 2 + 1);
    }
    expect(prompt).toMatch(/unknown person .*eyeglasses: yes/);
    expect(prompt).toContain('none was detected');
  });

  it('a group photo: every face has features; small ones say they were too small to check', async () => {
    const { analysis, prompt } = await ask('faces/sample5.jpg', 'Who wears glasses?');
    expect(analysis.count).toBe(analysis.faces.length);
    expect(analysis.count).toBeGreaterThan(3);
    for (const f of analysis.faces) expect(f.features.face_too_small).toBe(f.w < 80 || f.h < 80);
    expect(analysis.faces.some((f) => f.features.face_too_small)).toBe(true);
    expect(analysis.faces.filter((f) => f.features.eyes === 2).length).toBeGreaterThan(2);
    expect(prompt).toContain('face too small to check eyes, smile or eyeglasses');
    expect(prompt.match(/eyes seen: /g)?.length).toBe(analysis.faces.filter((f) => !f.features.face_too_small).length);
  });

  it('no face: count 0 and no feature lines', async () => {
    const { analysis, prompt } = await ask('objects/chelsea.png', 'Anyone here?');
    expect(analysis.count).toBe(0);
    expect(analysis.faces).toEqual([]);
    expect(prompt).toContain('Faces: none detected.');
    expect(prompt).not.toContain('eyeglasses');
  });

  it('the streamed analysis event carries count and features too', async () => {
    const res = await fetch(`${server.url}/api/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'Describe her', image: base64(await readTestImage('faces/astronaut.png')), stream: true }),
    });
    expect(res.status).toBe(200);
    const [first] = parseSse(await res.text());
    expect(first.event).toBe('analysis');
    const data = first.data as { count: number; faces: ChatFace[] };
    expect(data.count).toBe(1);
    expect(data.faces[0].features).toEqual({
      ...withOriginalNames(fixture.faces.find((f) => f.image === 'faces/astronaut.png')!.features, data.faces[0]),
      profile_face: true,
    });
  });
});

describe('facial-feature cascade settings', () => {
  it('a missing or broken cascade file stops start-up with the setting named', async () => {
    await expect(startTestServer({ EYE_CASCADE_FILE: '/nonexistent/eye.xml' })).rejects.toThrow(/EYE_CASCADE_FILE: cannot read/);
    await expect(startTestServer({ SMILE_CASCADE_FILE: path.join(REPO_ROOT, 'package.json') })).rejects.toThrow(
      /SMILE_CASCADE_FILE: .* is not a usable Haar cascade/,
    );
    await expect(startTestServer({ PROFILE_CASCADE_FILE: '/nonexistent/profile.xml' })).rejects.toThrow(
      /PROFILE_CASCADE_FILE: cannot read/,
    );
    await expect(startTestServer({ PROFILE_CASCADE_FILE: path.join(REPO_ROOT, 'package.json') })).rejects.toThrow(
      /PROFILE_CASCADE_FILE: .* is not a usable Haar cascade/,
    );
  });
});
