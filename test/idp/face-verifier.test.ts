/**
 * The face step's decisions, one reason per case: the answers a backend can give (here a stand-in Backend, so each
 * answer is exact), and the real backend client against real HTTP servers on 127.0.0.1 that time out or fail.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { type Backend, BackendError, createBackend, type Recognition } from '../../server/idp/backend.js';
import { createFaceVerifier } from '../../server/idp/face-verifier.js';
import type { LivenessChecker } from '../../server/idp/liveness.js';
import type { User } from '../../server/idp/users.js';
import { capture, PERSON_A } from './faces.js';

const user = { id: 'u1', username: 'ada' } as User;
const face = (label: string, confidence: number, reason?: string) => ({ x: 10, y: 10, w: 100, h: 100, label, confidence, reason });
const alive: LivenessChecker = { score: async () => ({ antispoof: 0.8, liveness: 0.9 }) };

/** Probes are the verifier's 1x1 picture asking whether embedding is trained; `probe` answers them. */
const isProbe = (image: Buffer) => image.length < 100;

function verifier(
  answer: Recognition | ((recognizer?: 'embedding' | 'lbph') => Promise<Recognition>),
  liveness = alive,
  recognitionModel: 'embedding' | 'lbph' = 'embedding',
  probe: () => Promise<Recognition> = async () => ({ faces: [], recognitionModel: 'embedding', trained: true }),
) {
  const backend: Backend = {
    health: async () => undefined,
    recognize: async (image, recognizer) => (isProbe(image) ? probe() : typeof answer === 'function' ? answer(recognizer) : answer),
    upload: async () => undefined,
    train: async () => undefined,
  };
  return createFaceVerifier({ backend, liveness, confidenceThreshold: 65, livenessMin: 0.5, recognitionModel });
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
  const cases: [string, Recognition, string][] = [
    ['no face', { faces: [], recognitionModel: 'embedding', trained: true }, 'no_face'],
    ['two faces', { faces: [face('ada', 90), face('bob', 90)], recognitionModel: 'embedding', trained: true }, 'several_faces'],
    ['an untrained model', { faces: [face('unknown', 0, 'not_trained')], recognitionModel: 'embedding', trained: false }, 'not_trained'],
    ['an unknown face', { faces: [face('unknown', 0, 'no_match')], recognitionModel: 'embedding', trained: true }, 'not_recognised'],
    ['another person', { faces: [face('bob', 95)], recognitionModel: 'embedding', trained: true }, 'another_person'],
    ['a low score', { faces: [face('ada', 64.9)], recognitionModel: 'lbph', trained: true }, 'low_score'],
  ];
  it.each(cases)('denies %s', async (_, answer, code) => {
    const decision = await verifier(answer).verify(user, { frames: [await capture(PERSON_A, 3)] });
    expect(decision).toMatchObject({ granted: false, code });
  });

  it('grants at the threshold with the lowest confidence of the burst as the score', async () => {
    let n = 0;
    const v = verifier(async () => ({ faces: [face('ada', [80, 65, 70][n++])], recognitionModel: 'embedding', trained: true }));
    const frames = await Promise.all([3, 4, 5].map((i) => capture(PERSON_A, i)));
    expect(await v.verify(user, { frames })).toEqual({ granted: true, score: 65 });
  });

  it('asks for embedding, and for LBPH only while embedding is untrained or cannot run', async () => {
    const frames = [await capture(PERSON_A, 3)];
    const asked: (string | undefined)[] = [];
    const answer = async (recognizer?: 'embedding' | 'lbph') => {
      asked.push(recognizer);
      return { faces: [face('ada', 70)], recognitionModel: recognizer ?? 'lbph', trained: true };
    };
    expect((await verifier(answer).verify(user, { frames })).granted).toBe(true);
    expect(asked).toEqual(['embedding']);
    const untrained = async () => ({ faces: [], recognitionModel: 'embedding', trained: false });
    expect((await verifier(answer, alive, 'embedding', untrained).verify(user, { frames })).granted).toBe(true);
    expect(asked).toEqual(['embedding', 'lbph']);
    const unavailable = async (): Promise<Recognition> => {
      throw new BackendError('backend_error', 'recognition model "embedding" is not available', 'model_unavailable', 409);
    };
    expect((await verifier(answer, alive, 'embedding', unavailable).verify(user, { frames })).granted).toBe(true);
    expect(asked).toEqual(['embedding', 'lbph', 'lbph']);
    // Set to LBPH, an answer from another recognizer is not trusted.
    const embedding = { faces: [face('ada', 90)], recognitionModel: 'embedding', trained: true };
    expect(await verifier(embedding, alive, 'lbph').verify(user, { frames })).toMatchObject({ code: 'untrusted_recognizer' });
  });

  it('denies on liveness: a low score, or models that cannot run', async () => {
    const ok = { faces: [face('ada', 90)], recognitionModel: 'embedding', trained: true };
    const frames = [await capture(PERSON_A, 3)];
    const spoof: LivenessChecker = { score: async () => ({ antispoof: 0.3, liveness: 0.99 }) };
    expect(await verifier(ok, spoof).verify(user, { frames })).toMatchObject({ code: 'liveness_failed', score: 90 });
    const broken: LivenessChecker = {
      score: async () => {
        throw new Error('no model');
      },
    };
    expect(await verifier(ok, broken).verify(user, { frames })).toMatchObject({ code: 'liveness_unavailable' });
  });

  it('refuses frames that are not pictures, and too many', async () => {
    const ok = { faces: [face('ada', 90)], recognitionModel: 'embedding', trained: true };
    expect(await verifier(ok).verify(user, { frames: ['bm90IGFuIGltYWdl'] })).toMatchObject({ code: 'invalid_frames' });
    const six = Array.from({ length: 6 }, () => 'x');
    expect(await verifier(ok).verify(user, { frames: six })).toMatchObject({ code: 'invalid_frames' });
  });
});

describe('createBackend against real servers', () => {
  const check = (baseUrl: string) =>
    createFaceVerifier({
      backend: createBackend({ baseUrl, timeoutMs: 300 }),
      liveness: alive,
      confidenceThreshold: 65,
      livenessMin: 0.5,
      recognitionModel: 'embedding',
    }).verify(user, { frames: ['/9j/4AAQ'] });

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
});
