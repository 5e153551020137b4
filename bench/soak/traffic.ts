/**
 * The soak's traffic: one entry per kind of request, each with its rate at SOAK_RATE=1 and the statuses it may
 * get. Uploads go to the labels of the current epoch (`soak-<epoch>-<n>`); labels two epochs old get no more
 * uploads and are deleted, so a delete never races an upload and what must be on disk at the end is exact:
 * every acknowledged upload of a label not deleted, and nothing of a deleted one.
 */
import { randomUUID } from 'node:crypto';

export interface SoakImages {
  /** The 640x480-ish photos recognised, uploaded, asked about. */
  faces: Buffer[];
  /** A photo with objects. */
  objects: Buffer;
}

/** What the traffic has done so far that the end checks need. */
export class SoakState {
  epoch = 0;
  private uploads = 0;
  /** label -> filenames acknowledged (200) for it. */
  readonly acknowledged = new Map<string, Set<string>>();
  /** Labels whose DELETE answered 200. */
  readonly deleted = new Set<string>();
  /** Uploads sent but not answered yet, per label. */
  readonly inFlight = new Map<string, number>();
  /** capture_id -> label and filename first acknowledged for it (re-sent to check idempotency). */
  readonly captures = new Map<string, { label: string; filename: string }>();
  /** Answers that were of an expected status but wrong in content. */
  readonly problems: string[] = [];

  nextUploadLabel(): string {
    return `soak-${this.epoch}-${this.uploads++ % 3}`;
  }

  /** Labels of epochs at least two back that are not deleted yet and have no upload in flight. */
  deletable(): string[] {
    return [...this.acknowledged.keys()].filter((label) => {
      const epoch = Number(label.split('-')[1]);
      return epoch <= this.epoch - 2 && !this.deleted.has(label) && !this.inFlight.get(label);
    });
  }
}

export interface Prepared {
  url: string;
  init: RequestInit;
  /** Called with the body of an answer of an expected status, to record what it says. */
  after?: (status: number, text: string) => void;
  /** Called once the request is answered or failed (in-flight bookkeeping). */
  done?: () => void;
}

export interface SoakRoute {
  name: string;
  /** Requests per second at SOAK_RATE=1. */
  rate: number;
  /** Statuses that are not errors (the expected 4xx included). */
  expected: number[];
  /** The next request, or null when there is nothing to do now (a delete with no label due). */
  prepare(base: string, state: SoakState, images: SoakImages, n: number): Prepared | null;
}

const json = (body: unknown): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});
const b64 = (bytes: Buffer) => bytes.toString('base64');

function uploadForm(label: string, image: Buffer, capture?: string): FormData {
  const form = new FormData();
  form.set('label', label);
  if (capture) form.set('capture_id', capture);
  form.set('file', new Blob([new Uint8Array(image)], { type: 'image/jpeg' }), 'capture.jpg');
  return form;
}

function resultRecord(): Record<string, unknown> {
  return {
    id: randomUUID(),
    kind: 'recognition',
    captured_at: new Date().toISOString(),
    engine: 'browser',
    backend: 'wasm',
    faces: [{ x: 10, y: 20, w: 80, h: 80, label: 'soak', confidence: 90 }],
  };
}

export const SOAK_ROUTES: SoakRoute[] = [
  {
    name: 'POST /api/recognize',
    rate: 2,
    expected: [200],
    prepare: (base, _s, images, n) => ({
      url: `${base}/api/recognize`,
      init: json({ image: b64(images.faces[n % images.faces.length]) }),
    }),
  },
  {
    name: 'POST /api/objects/detect',
    rate: 0.5,
    expected: [200],
    prepare: (base, _s, images) => ({ url: `${base}/api/objects/detect`, init: json({ image: b64(images.objects) }) }),
  },
  {
    name: 'POST /api/images',
    rate: 1,
    expected: [200],
    prepare: (base, state, images, n) => {
      // Every 10th upload re-sends an acknowledged capture: it must answer the same file and store nothing new.
      const again =
        n % 10 === 9
          ? [...state.captures].find(([, c]) => !state.deleted.has(c.label) && c.label.startsWith(`soak-${state.epoch}-`))
          : undefined;
      const label = again ? again[1].label : state.nextUploadLabel();
      const capture = again ? again[0] : n % 2 ? randomUUID() : undefined;
      state.inFlight.set(label, (state.inFlight.get(label) ?? 0) + 1);
      return {
        url: `${base}/api/images`,
        init: { method: 'POST', body: uploadForm(label, images.faces[n % images.faces.length], capture) },
        after: (_status, text) => {
          const body = JSON.parse(text) as { label: string; filename: string; duplicate?: boolean };
          if (body.label !== label) state.problems.push(`upload to ${label} answered label ${body.label}`);
          if (again) {
            if (!body.duplicate || body.filename !== again[1].filename)
              state.problems.push(`re-sent capture ${capture} was stored again as ${body.filename}`);
            return;
          }
          const files = state.acknowledged.get(label) ?? new Set<string>();
          state.acknowledged.set(label, files);
          files.add(body.filename);
          if (capture) state.captures.set(capture, { label, filename: body.filename });
        },
        done: () => state.inFlight.set(label, (state.inFlight.get(label) ?? 1) - 1),
      };
    },
  },
  {
    name: 'DELETE /api/images/{label}',
    rate: 0.2,
    // 409: a training run is in progress (documented: nothing was removed); the label is deleted by a later tick.
    expected: [200, 409],
    prepare: (base, state) => {
      const label = state.deletable()[0];
      if (!label) return null;
      // Marked at once so the next tick does not delete it twice (an answer other than 200 fails the run anyway).
      state.deleted.add(label);
      return {
        url: `${base}/api/images/${encodeURIComponent(label)}`,
        init: { method: 'DELETE' },
        after: (status, text) => {
          if (status === 409) {
            state.deleted.delete(label);
            return;
          }
          const body = JSON.parse(text) as { deleted: number };
          const expected = state.acknowledged.get(label)?.size ?? 0;
          if (body.deleted !== expected)
            state.problems.push(`DELETE ${label} removed ${body.deleted} images, ${expected} were acknowledged`);
        },
      };
    },
  },
  {
    name: 'POST /api/train',
    rate: 1 / 60,
    // 409: one is still running; 422: no image gave a face yet (the first seconds).
    expected: [200, 409, 422],
    prepare: (base) => ({ url: `${base}/api/train`, init: json({}) }),
  },
  {
    name: 'POST /api/results',
    rate: 1,
    expected: [200],
    prepare: (base, _s, _i, n) => ({
      url: `${base}/api/results`,
      init: json({ results: Array.from({ length: 1 + (n % 3) }, resultRecord) }),
    }),
  },
  {
    name: 'GET /api/results',
    rate: 0.5,
    expected: [200],
    prepare: (base, _s, _i, n) => ({ url: `${base}/api/results?limit=${1 + (n % 50)}`, init: {} }),
  },
  {
    name: 'POST /api/chat',
    rate: 0.2,
    expected: [200],
    prepare: (base, _s, images, n) => ({
      url: `${base}/api/chat`,
      init: json({ message: 'Who is in this picture?', image: b64(images.faces[n % images.faces.length]), stream: n % 2 === 0 }),
    }),
  },
  {
    name: 'GET /api/labels',
    rate: 0.5,
    expected: [200],
    prepare: (base) => ({ url: `${base}/api/labels`, init: {} }),
  },
  {
    name: 'GET /api/health',
    rate: 1,
    expected: [200],
    prepare: (base) => ({ url: `${base}/api/health`, init: {} }),
  },
  {
    name: 'refused (expected 4xx)',
    rate: 0.3,
    expected: [400, 404, 415],
    prepare: (base, _s, images, n) =>
      [
        { url: `${base}/api/recognize`, init: json({ image: 'this is not base64!' }) },
        { url: `${base}/api/images`, init: { method: 'POST', body: uploadForm('..', images.faces[0]) } },
        { url: `${base}/api/recognize`, init: json({ image: b64(images.faces[0].subarray(0, 2000)) }) },
        { url: `${base}/api/images/nobody-${n}`, init: { method: 'DELETE' } },
      ][n % 4],
  },
];
