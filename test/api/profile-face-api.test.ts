/**
 * The original service's `features.profile_face` (issue #35) over real HTTP, in `POST /api/analyze` and the chat
 * analysis of `POST /api/chat`: whether OpenCV's profile-face cascade (haarcascade_profileface.xml, shipped in
 * public/models) finds a face turned to one side around the face box, and `cascades_loaded.profile` says the server
 * has it. The chat analysis' faces also say which detector found them (`detection_method`), as `/api/analyze`'s do.
 * The LLM is a TEST DOUBLE (test/helpers/openai-double.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { base64 } from '../helpers/faces.js';
import { startOpenAIDouble, type OpenAIDouble } from '../helpers/openai-double.js';
import { postJson, readTestImage, startTestServer, type TestServer } from '../helpers/test-server.js';

let llm: OpenAIDouble;
let server: TestServer;

beforeAll(async () => {
  llm = await startOpenAIDouble();
  server = await startTestServer({
    WORKERS: '1',
    EMBEDDING_ENABLED: 'false',
    OBJECT_DETECTION_ENABLED: 'false',
    CHAT_ENDPOINT: llm.url,
    CHAT_MODEL: 'double-model',
    CHAT_CHECK_INTERVAL_MS: '300',
  });
});

afterAll(async () => {
  await server?.close();
  await llm?.close();
});

async function analyze(image: string) {
  const res = await postJson(`${server.url}/api/analyze`, { image: base64(await readTestImage(image)) });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

describe('POST /api/analyze: features.profile_face', () => {
  it('says the server has the profile cascade', async () => {
    expect((await analyze('faces/grace_hopper.jpg')).cascades_loaded).toEqual({
      face: true,
      eye: true,
      smile: true,
      profile: true,
      eye_glasses: true,
    });
  });

  it('true for a face turned to one side (the astronaut looks past the camera)', async () => {
    const { faces } = await analyze('faces/astronaut.png');
    expect(faces).toHaveLength(1);
    expect(faces[0].features.profile_face).toBe(true);
  });

  it('false for a face looking at the camera (Grace Hopper)', async () => {
    const { faces } = await analyze('faces/grace_hopper.jpg');
    expect(faces).toHaveLength(1);
    expect(faces[0].features.profile_face).toBe(false);
  });

  it('a boolean on every face of a crowd, small faces included', async () => {
    const { faces } = await analyze('faces/human-facematch.jpg');
    expect(faces.length).toBeGreaterThan(10);
    for (const face of faces) expect(typeof face.features.profile_face, JSON.stringify(face)).toBe('boolean');
  });
});

describe('POST /api/chat: the analysis faces', () => {
  async function chat(image: string) {
    const res = await postJson(`${server.url}/api/chat`, { message: 'Who is this?', image: base64(await readTestImage(image)) });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.analysis;
  }

  it('features.profile_face, as /api/analyze gives it', async () => {
    for (const image of ['faces/astronaut.png', 'faces/grace_hopper.jpg']) {
      const analysis = await chat(image);
      const analyzed = await analyze(image);
      expect(
        analysis.faces.map((f: any) => f.features.profile_face),
        image,
      ).toEqual(analyzed.faces.map((f: any) => f.features.profile_face));
    }
  });

  it('detection_method on each face: the detector that found it (the analysis` own)', async () => {
    const analysis = await chat('faces/grace_hopper.jpg');
    expect(analysis.detection_method).toBe('local');
    expect(analysis.faces.map((f: any) => f.detection_method)).toEqual(['local']);
  });
});
