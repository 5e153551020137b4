/**
 * The face step's decisions, one reason per case: the answers the API's 1:1 verification can give (here a stand-in
 * Backend, so each answer is exact); answers that do not fit the API's schema from a real HTTP server (denied, never
 * granted); and the real backend client against real HTTP servers on 127.0.0.1 that time out or fail.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { type Backend, BackendError, createBackend } from '../../server/idp/backend.js';
import { createFaceVerifier } from '../../server/idp/face-verifier.js';
import type { LivenessChecker } from '../../server/idp/liveness.js';
import type { User } from '../../server/idp/users.js';
import type { VerifyFrame, VerifyReason, VerifyResponse } from '../../shared/api/verify.js';
import { capture, PERSON_A } from './faces.js';

const user = { id: 'u1', username: 'ada' } as User;
const alive: LivenessChecker = { score: async () => ({ antispoof: 0.8, liveness: 0.9 }) };
const box = { x: 10, y: 10, w: 100, h: 100 };
const BOUNDS = { embedding: 0.82, lbph: 75 };

/** One frame's verdict as the API gives it. */
function frame(reason: VerifyReason, confidence = reason === 'match' ? 80 : 40): VerifyFrame {
  const compared = reason === 'match' || reason === 'below_threshold' || reason === 'copy_of_training_image';
  return {
    match: reason === 'match',
    reason,
    distance: compared ? (100 - confidence) / 100 : null,
    confidence: compared ? confidence : 0,
    faces: reason === 'no_face' ? 0 : reason === 'several_faces' ? 2 : 1,
    ...(reason === 'no_face' || reason === 'several_faces' ? {} : { face: box }),
  };
}

/** The API's answer with these frames, the burst decided as the API decides it. */
function answer(frames: VerifyFrame[], recognition_model: 'embedding' | 'lbph' = 'embedding', label = 'ada'): VerifyResponse {
  const failing = frames.find((f) => !f.match);
  const distances = frames.map((f) => f.distance);
  return {
    match: !failing,
    reason: failing?.reason ?? 'match',
    label,
    distance: distances.includes(null) ? null : Math.max(...(distances as number[])),
    confidence: Math.min(...frames.map((f) => f.confidence ?? 0)),
    threshold: 0.45,
    recognition_model,
    detection_method: 'local',
    frames,
  };
}

type Verify = Backend['verify'];

function verifier(reply: VerifyResponse | Verify, liveness = alive, recognitionModel: 'embedding' | 'lbph' = 'embedding', threshold = 0) {
  const backend: Backend = {
    health: async () => undefined,
    recognize: async () => {
      throw new Error('the face step verifies 1:1; it never recognises 1:N');
    },
    verify: async (label, frames, recognizer) => (typeof reply === 'function' ? reply(label, frames, recognizer) : reply),
    upload: async () => undefined,
    train: async () => undefined,
  };
  return createFaceVerifier({
    backend,
    liveness,
    confidenceThreshold: threshold,
    livenessMin: 0.5,
    recognitionModel,
    maxVerifyDistance: BOUNDS,
  });
}

const servers: http.Server[] = [];
afterAll(() => {
  for (const s of servers) {
    s.closeAllConnections();
    s.close();
  }
});

async function serve(handler: http.RequestListener): Promise<string> {
  const server = http.createServer(handler);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('createFaceVerifier', () => {
  const cases: [string, VerifyResponse, string][] = [
    ['no face', answer([frame('no_face')]), 'no_face'],
    ['two faces', answer([frame('several_faces')]), 'several_faces'],
    ['an untrained model', answer([frame('not_trained')], 'lbph'), 'not_trained'],
    ['a user whose face was never enrolled', answer([frame('not_enrolled')]), 'not_enrolled'],
    ['a face past the verification threshold (anyone else, look-alikes too)', answer([frame('below_threshold')]), 'not_recognised'],
    ['a copy of an enrollment picture', answer([frame('copy_of_training_image', 99)], 'lbph'), 'copy_of_training_image'],
    ['a burst with one frame that does not match', answer([frame('match'), frame('below_threshold'), frame('match')]), 'not_recognised'],
  ];
  it.each(cases)('denies %s', async (_, reply, code) => {
    const decision = await verifier(reply).verify(user, { frames: [await capture(PERSON_A, 3)] });
    expect(decision).toMatchObject({ granted: false, code });
  });

  it("asks the API to verify the user's own label with every frame, and grants its match, scored by the least sure frame", async () => {
    const asked: { label: string; frames: number; recognizer?: string }[] = [];
    const v = verifier(async (label, frames, recognizer) => {
      asked.push({ label, frames: frames.length, recognizer });
      return answer([frame('match', 80), frame('match', 65), frame('match', 70)]);
    });
    const frames = await Promise.all([3, 4, 5].map((i) => capture(PERSON_A, i)));
    expect(await v.verify(user, { frames })).toEqual({ granted: true, score: 65 });
    expect(asked).toEqual([{ label: 'ada', frames: 3, recognizer: 'embedding' }]);
  });

  it('denies a match whose answer does not hold together: about another label, a face without its box, a "no" above "yes" frames', async () => {
    const frames = [await capture(PERSON_A, 3)];
    expect(await verifier(answer([frame('match')], 'embedding', 'bob')).verify(user, { frames })).toMatchObject({
      granted: false,
      code: 'verification_error',
    });
    const { face: _, ...noBox } = frame('match');
    expect(await verifier(answer([noBox])).verify(user, { frames })).toMatchObject({ granted: false, code: 'verification_error' });
    expect(await verifier({ ...answer([frame('match')]), match: false }).verify(user, { frames })).toMatchObject({ granted: false });
  });

  it('BIOMETRIC_CONFIDENCE_THRESHOLD only raises the bar: a match under it is a low score', async () => {
    const frames = [await capture(PERSON_A, 3)];
    const reply = answer([frame('match', 64.9)]);
    expect(await verifier(reply, alive, 'embedding', 65).verify(user, { frames })).toMatchObject({ code: 'low_score', score: 64.9 });
    expect(await verifier(reply, alive, 'embedding', 0).verify(user, { frames })).toEqual({ granted: true, score: 64.9 });
    // No threshold turns the API's "no" into a yes.
    expect(await verifier(answer([frame('below_threshold', 59)])).verify(user, { frames })).toMatchObject({ code: 'not_recognised' });
  });

  it('asks for embedding, and for LBPH only while embedding is untrained or cannot run', async () => {
    const frames = [await capture(PERSON_A, 3)];
    const asked: (string | undefined)[] = [];
    const reply =
      (embedding: 'ok' | 'untrained' | 'unavailable'): Verify =>
      async (_label, _frames, recognizer) => {
        asked.push(recognizer);
        if (recognizer === 'embedding' && embedding === 'unavailable')
          throw new BackendError('backend_error', 'recognition model "embedding" is not available', 'model_unavailable', 409);
        if (recognizer === 'embedding' && embedding === 'untrained') return answer([frame('not_trained')], 'embedding');
        return answer([frame('match')], recognizer ?? 'lbph');
      };
    expect((await verifier(reply('ok')).verify(user, { frames })).granted).toBe(true);
    expect(asked).toEqual(['embedding']);
    expect((await verifier(reply('untrained')).verify(user, { frames })).granted).toBe(true);
    expect(asked).toEqual(['embedding', 'embedding', 'lbph']);
    expect((await verifier(reply('unavailable')).verify(user, { frames })).granted).toBe(true);
    expect(asked).toEqual(['embedding', 'embedding', 'lbph', 'embedding', 'lbph']);
    // Set to LBPH, an answer from another recognizer is not trusted.
    expect(await verifier(answer([frame('match')], 'embedding'), alive, 'lbph').verify(user, { frames })).toMatchObject({
      code: 'untrusted_recognizer',
    });
  });

  it('denies on liveness: a low score, or models that cannot run; each frame is scored on the face the API compared', async () => {
    const ok = answer([frame('match', 90)]);
    const frames = [await capture(PERSON_A, 3)];
    const boxes: unknown[] = [];
    const spoof: LivenessChecker = {
      score: async (_, b) => {
        boxes.push(b);
        return { antispoof: 0.3, liveness: 0.99 };
      },
    };
    expect(await verifier(ok, spoof).verify(user, { frames })).toMatchObject({ code: 'liveness_failed', score: 90 });
    expect(boxes).toEqual([box]);
    const broken: LivenessChecker = {
      score: async () => {
        throw new Error('no model');
      },
    };
    expect(await verifier(ok, broken).verify(user, { frames })).toMatchObject({ code: 'liveness_unavailable' });
  });

  it('refuses frames that are not pictures, and too many', async () => {
    const ok = answer([frame('match')]);
    expect(await verifier(ok).verify(user, { frames: ['bm90IGFuIGltYWdl'] })).toMatchObject({ code: 'invalid_frames' });
    const six = Array.from({ length: 6 }, () => 'x');
    expect(await verifier(ok).verify(user, { frames: six })).toMatchObject({ code: 'invalid_frames' });
  });
});

describe('createBackend against real servers', () => {
  const check = async (baseUrl: string) =>
    createFaceVerifier({
      backend: createBackend({ baseUrl, timeoutMs: 300 }),
      liveness: alive,
      confidenceThreshold: 0,
      livenessMin: 0.5,
      recognitionModel: 'embedding',
      maxVerifyDistance: BOUNDS,
    }).verify(user, { frames: [await capture(PERSON_A, 3)] });

  /** A backend that is healthy and answers every verification with `body`. */
  const answering = (body: unknown) =>
    serve((req, res) => {
      const json = req.url === '/api/health' ? { status: 'ok' } : body;
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(json)));
    });

  it('denies when the backend does not answer in time (backend_timeout)', async () => {
    const url = await serve(() => undefined); // never answers
    expect(await check(url)).toMatchObject({ granted: false, code: 'backend_timeout' });
  });

  it('denies when the backend fails or refuses the IdP', async () => {
    const failing = await serve((_, res) =>
      res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":{"code":"x","message":"down"}}'),
    );
    expect(await check(failing)).toMatchObject({ code: 'backend_unavailable' });
    const refusing = await serve((_, res) => res.writeHead(401).end());
    expect(await check(refusing)).toMatchObject({ code: 'backend_refused' });
  });

  it('grants a well-formed match, and denies every malformed one (backend_error), however much it says "match"', async () => {
    const good = answer([frame('match')]);
    expect(await check(await answering(good))).toEqual({ granted: true, score: 80 });
    const malformed: unknown[] = [
      { match: true },
      { ...good, match: 'yes' },
      { ...good, confidence: 'high' },
      { ...good, reason: 'looks_fine' },
      { ...good, recognition_model: 'eigenfaces' },
      { ...good, frames: undefined },
      { ...good, frames: [frame('match'), frame('match')] },
      { ...good, frames: [{ ...frame('match'), distance: 'near' }] },
      null,
      'match',
    ];
    for (const body of malformed)
      expect(await check(await answering(body)), JSON.stringify(body)?.slice(0, 60)).toMatchObject({
        granted: false,
        code: 'backend_error',
      });
  });
});
