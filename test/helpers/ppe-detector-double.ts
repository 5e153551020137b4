/**
 * TEST DOUBLE of a PPE detector. No PPE model exists here (no hardhat/vest weights can be installed), so the tests
 * talk to this instead: a real HTTP server on 127.0.0.1 speaking exactly the detector's wire format,
 * `POST /v1/predict` (the frame as raw JPEG, `content-type: image/jpeg`, the lowest confidence in `X-Confidence`)
 * answered `{ detections: [{ class_id, class_name, confidence, bbox: {x1,y1,x2,y2} }], count }`, and `GET /health`.
 * Its detections are not found in the image: they are canned scenes, drawn as fractions of the frame and scaled
 * to the size of the posted JPEG (decoded with sharp), so the double works for any frame.
 *
 * It checks that every posted body is a JPEG (starts with FF D8; anything else: 415) and records each request
 * (path, headers, X-Confidence, whether it was a JPEG, its size).
 *
 * Scenes:
 * - `equipped`: one person wearing a hardhat, goggles and a safety vest;
 * - `two-persons-one-equipped`: one person fully equipped, one with nothing (every item is in the frame: the
 *   original whole-image rule called this compliant; per person it is a violation);
 * - `nobody`: no person, a hardhat lying on the floor;
 * - `no-person-class`: a model without a person class: only item boxes (`personItems`, hardhat and vest by default)
 *   placed on the heads and torsos of `persons`, person boxes the test found with Lookout's object detector;
 * - `no-hardhat`: one person with a `NO-Hardhat` box on the head (vest and goggles worn);
 * - `error`: HTTP 500; `loading`: HTTP 503 (as `npm run ppe-server` answers while its model loads); `slow`: the `equipped` answer after `delayMs`; `garbage`: HTTP 200 with a body that is
 *   not a prediction.
 * `stop()` closes the port (connection refused) and `start()` opens it again. `GET /health` answers
 * `{ status, model, ready }` as `npm run ppe-server` does (`healthStatus`, `healthReady` switch it).
 */
import { closeNow, listenLocal } from './double-server.js';
import http from 'node:http';
import sharp from 'sharp';

export type PpeScene =
  | 'equipped'
  | 'two-persons-one-equipped'
  | 'nobody'
  | 'no-person-class'
  | 'no-hardhat'
  | 'error'
  | 'loading'
  | 'slow'
  | 'garbage';

/** A box as fractions of the frame: left, top, width, height. */
export type FracBox = [number, number, number, number];

export interface PredictRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The X-Confidence header as sent (undefined when missing). */
  confidence: string | undefined;
  jpeg: boolean;
  bytes: number;
  width: number | null;
  height: number | null;
}

export interface PpeDetectorDouble {
  readonly url: string;
  readonly port: number;
  scene: PpeScene;
  /** Person boxes (fractions of the frame) the `no-person-class` scene dresses. */
  persons: FracBox[];
  /** Class names `no-person-class` puts on each person: `Hardhat` on the head, `Safety Vest` on the torso, `Goggles` on the eyes. */
  personItems: string[];
  /** Delay of the `slow` scene, in milliseconds. */
  delayMs: number;
  /** `/health` answers this status (200 by default). */
  healthStatus: number;
  /** The `ready` flag of `/health` (as `npm run ppe-server` says whether its model is loaded); true by default. */
  healthReady: boolean;
  readonly predictions: PredictRequest[];
  readonly healthChecks: number;
  /** The detections a scene gives on a frame of this size (what /v1/predict answers). */
  detectionsFor(scene: PpeScene, width: number, height: number): Detection[];
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

export interface Detection {
  class_id: number;
  class_name: string;
  confidence: number;
  bbox: { x1: number; y1: number; x2: number; y2: number };
}

/** The class list of the model the double plays (a typical hardhat-dataset model: Roboflow "construction safety"). */
export const DOUBLE_CLASSES = [
  'Hardhat',
  'Mask',
  'NO-Hardhat',
  'NO-Mask',
  'NO-Safety Vest',
  'Person',
  'Safety Cone',
  'Safety Vest',
  'Goggles',
];
const CLASS_ID = (name: string) => {
  const i = DOUBLE_CLASSES.findIndex((c) => c.toLowerCase() === name.toLowerCase());
  return i >= 0 ? i : DOUBLE_CLASSES.length;
};

/** Where an item sits on a person box [x, y, w, h] (fractions of that box). */
const ON_PERSON: Record<string, FracBox> = {
  hardhat: [0.3, 0.0, 0.4, 0.12],
  'no-hardhat': [0.3, 0.0, 0.4, 0.12],
  goggles: [0.35, 0.12, 0.3, 0.05],
  'safety vest': [0.15, 0.3, 0.7, 0.35],
};

/** An item placed on a person, as a box in fractions of the frame. */
export function itemOnPerson(person: FracBox, className: string): FracBox {
  const [px, py, pw, ph] = person;
  const [ix, iy, iw, ih] = ON_PERSON[className.toLowerCase()] ?? [0.2, 0.2, 0.6, 0.6];
  return [px + ix * pw, py + iy * ph, iw * pw, ih * ph];
}

const PERSON_A: FracBox = [0.3, 0.1, 0.4, 0.85];
const LEFT: FracBox = [0.05, 0.1, 0.35, 0.85];
const RIGHT: FracBox = [0.6, 0.1, 0.35, 0.85];

function dressed(person: FracBox, items: string[]): [string, FracBox][] {
  return items.map((name) => [name, itemOnPerson(person, name)]);
}

function sceneBoxes(double: Pick<PpeDetectorDouble, 'persons' | 'personItems'>, scene: PpeScene): [string, FracBox][] {
  switch (scene) {
    case 'equipped':
    case 'slow':
      return [['Person', PERSON_A], ...dressed(PERSON_A, ['Hardhat', 'Goggles', 'Safety Vest'])];
    case 'two-persons-one-equipped':
      return [['Person', LEFT], ...dressed(LEFT, ['Hardhat', 'Goggles', 'Safety Vest']), ['Person', RIGHT]];
    case 'nobody':
      return [['Hardhat', [0.05, 0.85, 0.1, 0.08]]];
    case 'no-person-class':
      return double.persons.flatMap((p) => dressed(p, double.personItems));
    case 'no-hardhat':
      return [['Person', PERSON_A], ...dressed(PERSON_A, ['NO-Hardhat', 'Goggles', 'Safety Vest'])];
    default:
      return [];
  }
}

export async function startPpeDetectorDouble(init: Partial<Pick<PpeDetectorDouble, 'scene' | 'delayMs'>> = {}): Promise<PpeDetectorDouble> {
  const timers = new Set<NodeJS.Timeout>();
  let healthChecks = 0;

  const detectionsFor = (scene: PpeScene, width: number, height: number): Detection[] =>
    sceneBoxes(double, scene).map(([name, [x, y, w, h]], i) => ({
      class_id: CLASS_ID(name),
      class_name: name,
      // Distinct, stable confidences (0.9, 0.89, ...).
      confidence: Math.round((0.9 - i * 0.01) * 100) / 100,
      bbox: {
        x1: Math.round(x * width * 10) / 10,
        y1: Math.round(y * height * 10) / 10,
        x2: Math.round((x + w) * width * 10) / 10,
        y2: Math.round((y + h) * height * 10) / 10,
      },
    }));

  const json = (res: http.ServerResponse, status: number, value: unknown) => {
    if (res.destroyed) return;
    const text = JSON.stringify(value);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  };

  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (d: Buffer) => parts.push(d));
    req.on('end', () => {
      void (async () => {
        const path = (req.url ?? '/').split('?')[0];
        if (req.method === 'GET' && path === '/health') {
          healthChecks++;
          return json(res, double.healthStatus, {
            status: double.healthStatus === 200 ? 'ok' : 'error',
            model: 'ppe-detector-double',
            ready: double.healthReady,
          });
        }
        if (req.method !== 'POST' || path !== '/v1/predict') return json(res, 404, { error: `no route ${req.method} ${path}` });
        const body = Buffer.concat(parts);
        const jpeg = body.length > 2 && body[0] === 0xff && body[1] === 0xd8;
        let width: number | null = null;
        let height: number | null = null;
        if (jpeg) {
          try {
            const meta = await sharp(body).metadata();
            width = meta.width ?? null;
            height = meta.height ?? null;
          } catch {
            // recorded as a JPEG of unknown size: answered 415 below
          }
        }
        const header = req.headers['x-confidence'];
        double.predictions.push({
          path,
          headers: req.headers,
          confidence: Array.isArray(header) ? header[0] : header,
          jpeg,
          bytes: body.length,
          width,
          height,
        });
        if (!jpeg || width === null || height === null) return json(res, 415, { error: 'the body must be a JPEG image' });
        const scene = double.scene;
        if (scene === 'error') return json(res, 500, { error: 'the detector failed on purpose' });
        if (scene === 'loading') return json(res, 503, { error: 'the model is not loaded yet' });
        if (scene === 'garbage') return json(res, 200, { predictions: 'not what the contract says', ok: true });
        const detections = detectionsFor(scene, width, height);
        const answer = () => json(res, 200, { detections, count: detections.length });
        if (scene === 'slow') {
          const t = setTimeout(() => {
            timers.delete(t);
            answer();
          }, double.delayMs);
          timers.add(t);
          return;
        }
        answer();
      })();
    });
  });

  const listen = (port: number) => listenLocal(server, port);
  const shut = () => closeNow(server, timers);

  const port = await listen(0);
  const double: PpeDetectorDouble = {
    url: `http://127.0.0.1:${port}`,
    port,
    scene: init.scene ?? 'equipped',
    persons: [],
    personItems: ['Hardhat', 'Safety Vest'],
    delayMs: init.delayMs ?? 3000,
    healthStatus: 200,
    healthReady: true,
    predictions: [],
    get healthChecks() {
      return healthChecks;
    },
    detectionsFor,
    stop: shut,
    async start() {
      if (!server.listening) await listen(port);
    },
    close: shut,
  };
  return double;
}
