/**
 * The face step's decisions, one reason per case: the answers a backend can give (here a stand-in Backend, so each
 * answer is exact), and the real backend client against real HTTP servers on 127.0.0.1 that time out or fail.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { type Backend, createBackend, type Recognition } from '../../server/idp/backend.js';
import { createFaceVerifier } from '../../server/idp/face-verifier.js';
import type { LivenessChecker } from '../../server/idp/liveness.js';
import type { User } from '../../server/idp/users.js';
import { capture, PERSON_A } from './faces.js';

const user = { id: 'u1', username: 'ada' } as User;
const face = (label: string, confidence: number, reason?: string) => ({ x: 10, y: 10, w: 100, h: 100, label, confidence, reason });
const alive: LivenessChecker = { score: async () => ({ antispoof: 0.8, liveness: 0.9 }) };

function verifier(
  answer: Recognition | (() => Promise<Recognition>),
  liveness = alive,
  recognitionModel: 'embedding' | 'lbph' = 'embedding',
) {
  const backend: Backend = {
    health: async () => undefined,
    recognize: async () => (typeof answer === 'function' ? answer() : answer),
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

  it('takes LBPH only as the fallback of embedding, and nothing else', async () => {
    const frames = [await capture(PERSON_A, 3)];
    const lbph = { faces: [face('ada', 70)], recognitionModel: 'lbph', trained: true };
    expect((await verifier(lbph, alive, 'embedding').verify(user, { frames })).granted).toBe(true);
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
