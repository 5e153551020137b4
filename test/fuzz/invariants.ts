/**
 * What must hold after every fuzz case and after every batch of cases.
 *
 * Per case:
 * - no 5xx, except the 503s a route documents for an engine switched off (`allowed5xx`: only in the fuzz run
 *   with the optional engines off; with them on, every upstream is a healthy double, so any 5xx is a bug);
 * - the answer is as the contract documents it for the route and status (test/helpers/contract.ts); a 405 with
 *   `method_not_allowed` for a documented path with another method counts as documented;
 * - every answer carries the cross-origin isolation headers, and an `X-Request-Id` (the client's when it sent a
 *   safe one);
 * - no answer contains the canary beside DATA_DIR, /etc/passwd or the app's package.json;
 * - stored files are byte-identical after any GET and after any refused (4xx) POST, PUT or DELETE (the PPE dead
 *   letters excepted: a refused PPE check is documented to write one);
 * - an acknowledged upload is on disk with exactly the bytes sent, under the label the shared normalisation
 *   gives, and the raw label finds it again (GET /api/images/{label}, /api/labels).
 *
 * Per batch: /api/health answers 200 in-process and over HTTP, nothing was written beside DATA_DIR (root, sibling,
 * TMPDIR), DATA_DIR holds only its documented layout, and the real-HTTP answers were as documented.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { contractProblems, routeFor } from '../helpers/contract.js';
import { normalizeLabel } from '../../shared/api/labels.js';
import type { ErrorCode } from '../../shared/api/errors.js';
import { apiRoutes, type RouteName } from '../../shared/api/routes.js';
import { honoPath } from '../../shared/api/route.js';
import { diff, layoutProblems, snapshot, type Snapshot } from './files.js';
import { describeRequest, type FuzzRequest, wellFormed } from './request.js';
import { type Answer, type FuzzTarget, outsideNow } from './target.js';

export type Allowed5xx = Partial<Record<RouteName, ErrorCode[]>>;

const FORBIDDEN = ['root:x:0:0', '"llama:install"'];

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;
const MUTATING = new Set(['POST', 'PUT', 'DELETE', 'PATCH']);

/** Percent-decodes a path as Hono routes it (runs that do not decode stay as they are; `%2F` stays encoded). */
export function routedPath(pathname: string): string {
  return pathname.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => {
    try {
      return decodeURI(run);
    } catch {
      return run;
    }
  });
}

function isDocumentedPath(pathname: string): boolean {
  return Object.values(apiRoutes).some((r) => new RegExp(`^/api${honoPath(r.path).replace(/:[A-Za-z_]+/g, '[^/]+')}$`).test(pathname));
}

function errorCode(text: string): string | undefined {
  try {
    return JSON.parse(text)?.error?.code;
  } catch {
    return undefined;
  }
}

/**
 * GET /api/health on a new connection: a fetch could reuse a kept-alive socket the server is just closing, which
 * says nothing about whether the server answers.
 */
function healthOverHttp(base: string): Promise<number | string> {
  return new Promise((resolve) => {
    const req = http.get(`${base}/api/health`, { agent: false, timeout: 10_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 'no status'));
    });
    req.on('timeout', () => req.destroy(new Error('no answer within 10 s')));
    req.on('error', (err: NodeJS.ErrnoException) => resolve(`${err.code ?? ''} ${err.message}`));
  });
}

export class CaseChecker {
  /** DATA_DIR after the previous case (no request runs between cases, and nothing writes in the background). */
  private stored: Snapshot;
  readonly statuses = new Map<string, Map<number, number>>();
  /** State problems already reported (a bad folder stays): each fails one batch, not every batch after it. */
  private readonly reported = new Set<string>();
  cases = 0;

  constructor(
    private readonly target: FuzzTarget,
    private readonly allowed5xx: Allowed5xx,
  ) {
    this.stored = snapshot(target.dataDir);
  }

  private count(route: string, status: number) {
    const byStatus = this.statuses.get(route) ?? new Map<number, number>();
    this.statuses.set(route, byStatus);
    byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
  }

  /** Sends one case and returns what is wrong (empty: every invariant held). */
  async run(req: FuzzRequest): Promise<string[]> {
    this.cases++;
    const answer = await this.target.send(req);
    this.count(req.route, answer.status);
    const problems = [...this.answerProblems(req, answer), ...(await this.storageProblems(req, answer))];
    if (problems.length === 0) return [];
    const body = answer.text.length > 600 ? `${answer.text.slice(0, 600)}...` : answer.text;
    return [`${describeRequest(answer.sent)}\n  -> ${answer.status} ${body}`, ...problems.map((p) => `  ! ${p}`)];
  }

  private answerProblems(req: FuzzRequest, a: Answer): string[] {
    const problems: string[] = [];
    const { pathname } = new URL(a.sent.path, 'http://x');
    if (a.status >= 500) {
      const code = errorCode(a.text);
      const allowed = this.allowed5xx[req.route as RouteName] ?? [];
      if (!(a.status === 503 && code && allowed.includes(code as ErrorCode))) problems.push(`a ${a.status} (${code ?? 'no error code'})`);
    }
    if (req.expect && (a.status !== req.expect.status || errorCode(a.text) !== req.expect.code)) {
      problems.push(`expected ${req.expect.status} ${req.expect.code}, got ${a.status} ${errorCode(a.text) ?? ''}`);
    }
    const documented = contractProblems(a.sent.method, routedPath(pathname), a.status, a.headers.get('content-type'), a.text);
    const wrongMethod =
      a.status === 405 &&
      errorCode(a.text) === 'method_not_allowed' &&
      isDocumentedPath(routedPath(pathname)) &&
      !routeFor(a.sent.method, routedPath(pathname));
    if (!wrongMethod) problems.push(...documented);
    for (const [name, value] of [
      ['cross-origin-opener-policy', 'same-origin'],
      ['cross-origin-embedder-policy', 'require-corp'],
      ['cross-origin-resource-policy', 'same-origin'],
    ]) {
      if (a.headers.get(name) !== value) problems.push(`${name} is ${JSON.stringify(a.headers.get(name))}, not ${value}`);
    }
    if (pathname.startsWith('/api/')) {
      const sentId = a.sent.headers.find(([k]) => k === 'x-request-id')?.[1];
      const id = a.headers.get('x-request-id');
      if (!id) problems.push('no X-Request-Id');
      else if (sentId !== undefined && SAFE_REQUEST_ID.test(sentId) && id !== sentId)
        problems.push(`X-Request-Id ${id}, not the ${sentId} sent`);
    }
    for (const secret of [...FORBIDDEN, this.target.canary]) {
      if (a.text.includes(secret)) problems.push(`the answer contains ${JSON.stringify(secret)}`);
    }
    return problems;
  }

  private async storageProblems(req: FuzzRequest, a: Answer): Promise<string[]> {
    const before = this.stored;
    // A recognition's sightings (crops) are written after its answer, by design: wait for them, so they are counted
    // with the request that made them, not with the next one.
    await this.target.service.ctx.sightingRecorder.idle();
    // Likewise a training's training.yml, written from training.lbph after its answer (#27): counted with the
    // training, not with the next request (a refused one saw the YAML's temp file renamed into place).
    await this.target.service.ctx.faces.writtenFiles();
    const after = snapshot(this.target.dataDir);
    this.stored = after;
    const problems: string[] = [];
    const mutating = MUTATING.has(a.sent.method);
    if (!mutating || (a.status >= 400 && a.status < 500)) {
      // A refused PPE check writes its dead letter, and a refused training (no face in any image, say) keeps the
      // features it computed, a cache of the images beside them (both documented); nothing else may change.
      const inFeatures = (line: string) => /^\S+ features(?:$|[\\/])/.test(line);
      const ignore = (line: string) =>
        (req.route === 'ppeDetect' && line.endsWith(`ppe${path.sep}dead-letters.json`)) || (req.route === 'train' && inFeatures(line));
      const changed = diff(before, after).filter((line) => !ignore(line));
      if (changed.length)
        problems.push(`stored files changed by a ${mutating ? 'refused request' : a.sent.method}: ${changed.slice(0, 5).join(', ')}`);
    }
    if (req.route === 'uploadImage' && a.status === 200) problems.push(...(await this.uploadProblems(req, a)));
    if (req.route === 'deleteLabel' && a.status === 200) {
      const label = JSON.parse(a.text).label as string;
      this.target.state.uploads = this.target.state.uploads.filter((u) => u.label !== label);
      if (fs.existsSync(path.join(this.target.dataDir, 'images', label)))
        problems.push(`label ${label} deleted, but its folder is still there`);
    }
    if (req.route === 'deleteImage' && a.status === 200) {
      const { label, filename } = JSON.parse(a.text) as { label: string; filename: string };
      this.target.state.uploads = this.target.state.uploads.filter((u) => u.label !== label || u.filename !== filename);
      if (fs.existsSync(path.join(this.target.dataDir, 'images', label, filename)))
        problems.push(`image ${label}/${filename} deleted, but it is still there`);
    }
    if (req.route === 'trainedModels' && a.headers.get('etag')) this.target.state.etag = a.headers.get('etag');
    return problems;
  }

  /** An acknowledged upload: stored as sent, under the normalised label, and found again by the raw label. */
  private async uploadProblems(req: FuzzRequest, a: Answer): Promise<string[]> {
    const problems: string[] = [];
    const body = JSON.parse(a.text) as { label: string; filename: string; duplicate?: boolean };
    const file = path.join(this.target.dataDir, 'images', body.label, body.filename);
    if (!fs.existsSync(file)) return [`acknowledged upload ${body.label}/${body.filename} is not on disk`];
    const raw = req.upload?.label;
    if (!body.duplicate)
      this.target.state.uploads.push({ label: body.label, filename: body.filename, raw: typeof raw === 'string' ? raw : body.label });
    // A re-sent capture_id keeps the image first stored under it (idempotent), whatever bytes came this time.
    if (!body.duplicate && req.upload?.image && !Buffer.from(fs.readFileSync(file)).equals(Buffer.from(req.upload.image))) {
      problems.push(`acknowledged upload ${body.label}/${body.filename} differs from the bytes sent`);
    }
    if (typeof raw === 'string') {
      const expected = normalizeLabel(raw);
      if (!expected.ok)
        problems.push(
          `label ${JSON.stringify(raw)} was accepted as ${JSON.stringify(body.label)}, but normalizeLabel refuses it (${expected.reason})`,
        );
      else if (expected.label !== body.label)
        problems.push(`label ${JSON.stringify(raw)} stored as ${JSON.stringify(body.label)}, not ${JSON.stringify(expected.label)}`);
      // The same name must reach the same folder: listing by the raw label finds the file.
      const listed = await this.target.send({
        route: 'labelImages',
        method: 'GET',
        path: `/api/images/${encodeURIComponent(wellFormed(raw))}`,
        headers: [],
        note: 'follow-up of an upload',
      });
      const names = listed.status === 200 ? (JSON.parse(listed.text).files as { filename: string }[]).map((i) => i.filename) : [];
      if (!names.includes(body.filename)) problems.push(`GET /api/images/{raw label} answers ${listed.status} without ${body.filename}`);
    }
    const labels = JSON.parse(
      (await this.target.send({ route: 'labels', method: 'GET', path: '/api/labels', headers: [], note: 'follow-up' })).text,
    );
    if (!labels.labels.includes(body.label)) problems.push(`GET /api/labels does not list ${JSON.stringify(body.label)}`);
    return problems;
  }

  /** Invariants of a whole batch (and the state shared with the raw-HTTP cases). */
  async batchProblems(): Promise<string[]> {
    const t = this.target;
    const problems: string[] = [];
    const health = await t.send({ route: 'health', method: 'GET', path: '/api/health', headers: [], note: 'after a batch' });
    if (health.status !== 200) problems.push(`/api/health answers ${health.status} in-process`);
    const overHttp = await healthOverHttp(t.url);
    if (overHttp !== 200) problems.push(`/api/health over HTTP: ${overHttp}`);
    const events = t.watch.take();
    if (events.length) problems.push(`written beside DATA_DIR: ${events.slice(0, 10).join(', ')}`);
    const outside = diff(t.outsideAtStart, outsideNow(t));
    if (outside.length) problems.push(`beside DATA_DIR: ${outside.slice(0, 10).join(', ')}`);
    const leftInTmp = fs.readdirSync(t.tmpDir);
    if (leftInTmp.length) problems.push(`left in TMPDIR: ${leftInTmp.slice(0, 10).join(', ')}`);
    await t.service.ctx.sightingRecorder.idle();
    this.stored = snapshot(t.dataDir);
    for (const p of layoutProblems(t.dataDir, this.stored)) {
      if (!this.reported.has(p)) problems.push(p);
      this.reported.add(p);
    }
    await t.settled();
    problems.push(...t.httpProblems.splice(0).map((p) => p.slice(0, 300)));
    problems.push(...t.httpServerErrors.splice(0).map((p) => `over HTTP the app answered ${p}`));
    return problems;
  }
}
