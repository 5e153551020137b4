/**
 * Records the biometric operations in the audit log (audit-log.ts) once they are answered: which operation (by
 * the route table: enroll, delete, train, verify, template download, sighting and image access, corrections,
 * review), its outcome by the answer's status, who (the principal under AUTH_MODE=oidc: a user's name or a
 * client's id; `anonymous` without auth), from where (the peer address) and on whom (a label or id from the path,
 * the handler's `auditTarget`, or the `label` of a small JSON answer). Nothing of the request body is read, so no
 * image, template or secret reaches the log.
 *
 * Mounted on /api before the bearer check, so refused attempts (no token, a role missing) are recorded too; #35:
 * under AUTH_MODE=oidc those refused without a verified principal are counted per source and minute instead (one
 * row each would let anyone grow the log). A failure to record is logged and never fails the request.
 */
import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context, MiddlewareHandler } from 'hono';
import type { ApiRoute } from '../../shared/api/route.js';
import { apiRoutes } from '../../shared/api/routes.js';
import type { Logger } from '../logger.js';
import type { ActorKind, AuditAction, AuditEntry, AuditLog, AuditOutcome } from './audit-log.js';

declare module 'hono' {
  interface ContextVariableMap {
    /** Whom an audited operation was about, when the path does not say (set by its handler). */
    auditTarget: string;
    /** #35: what the handler adds to the row's detail (a settings change's old and new values); scalars only. */
    auditDetail: Record<string, string | number | boolean | null>;
  }
}

/** The operation an endpoint is, for the log; null: not a biometric operation worth a row. */
export function auditActionOf(name: string, method: string, path: string): AuditAction | null {
  switch (name) {
    case 'uploadImage':
      return 'enroll';
    case 'deleteLabel':
    case 'deleteImage':
      return 'delete';
    case 'train':
      return 'train';
    case 'verify':
      return 'verify';
    case 'trainedModels':
    case 'trainedLbph':
    case 'trainedEmbedding':
    case 'trainedCorrections':
    // #27 the same templates in compact form
    case 'trainedCompact':
    case 'trainedCompactSegments':
      return 'template_download';
    case 'labelImages':
    case 'imageFile':
      return 'image_access';
    case 'updatePerson':
    // #36 2: rename, cover, merge, move photos and their undo change who a person's photos are of
    case 'renamePerson':
    case 'setPersonCover':
    case 'mergePerson':
    case 'movePhotos':
    case 'undoPersonAction':
      return 'person_update';
    // #36 2: a person's photos and sightings; sightings found by face
    case 'personPage':
      return 'image_access';
    case 'searchFaces':
      return 'sighting_access';
    // #35: what decides who is named: the recognizer, the detection method, the thresholds.
    case 'setModelsConfig':
    case 'setDetection':
    case 'setThresholds':
      return 'settings_change';
  }
  // The sightings, review and corrections endpoints, by their paths (their names are their modules').
  if (path === '/sightings' || path.startsWith('/sightings/')) return method === 'get' ? 'sighting_access' : 'delete';
  if (path === '/review/assign') return 'enroll';
  if (path.startsWith('/review/') && method !== 'get') return 'review';
  if ((path === '/corrections' || path.startsWith('/corrections/')) && method !== 'get') return 'correction';
  return null;
}

interface AuditedRoute {
  name: string;
  method: string;
  pattern: RegExp;
  params: string[];
  action: AuditAction;
}

function auditedRoutes(): AuditedRoute[] {
  return Object.entries(apiRoutes as Record<string, ApiRoute>).flatMap(([name, route]) => {
    const action = auditActionOf(name, route.method, route.path);
    if (!action) return [];
    const params = [...route.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
    const literal = route.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '([^/]+)');
    return [{ name, method: route.method.toUpperCase(), pattern: new RegExp(`^/api${literal}$`), params, action }];
  });
}

export function outcomeOf(status: number): AuditOutcome {
  if (status === 401 || status === 403) return 'denied';
  if (status >= 500) return 'error';
  if (status >= 400) return 'refused';
  return 'ok';
}

/** Who made a request, for a log line: the user's name, the client's id with "(client)", or "anonymous". */
export function actorText(c: Context): string {
  const { actor, actor_kind } = actorOf(c);
  if (actor_kind === 'anonymous' || actor === null) return 'anonymous';
  return actor_kind === 'client' ? `${actor} (client)` : actor;
}

function actorOf(c: Context): { actor: string | null; actor_kind: ActorKind } {
  const p = c.get('principal');
  if (!p) return { actor: null, actor_kind: 'anonymous' };
  if (p.kind === 'client') return { actor: p.client ?? p.username ?? p.subject, actor_kind: 'client' };
  return { actor: p.username ?? p.subject, actor_kind: 'user' };
}

function ipOf(c: Context): string | null {
  try {
    return getConnInfo(c).remote.address ?? null;
  } catch {
    // Not served by @hono/node-server (app.fetch called directly): no peer.
    return null;
  }
}

/** Answers whose `label` names the person (uploads, verifications, review): small JSON only. */
const LABEL_IN_ANSWER = new Set<AuditAction>(['enroll', 'verify', 'review', 'correction', 'delete']);
const MAX_ANSWER_READ = 64 * 1024;

async function labelInAnswer(res: Response): Promise<string | null> {
  if (!res.headers.get('content-type')?.startsWith('application/json')) return null;
  const length = Number(res.headers.get('content-length') ?? '0');
  if (length > MAX_ANSWER_READ) return null;
  try {
    const text = await res.clone().text();
    if (text.length > MAX_ANSWER_READ) return null;
    const body = JSON.parse(text) as { label?: unknown; error?: { code?: unknown } };
    return typeof body.label === 'string' ? body.label : null;
  } catch {
    return null;
  }
}

async function errorCodeOf(res: Response): Promise<string | null> {
  if (!res.headers.get('content-type')?.startsWith('application/json')) return null;
  try {
    const body = (await res.clone().json()) as { error?: { code?: unknown } };
    return typeof body.error?.code === 'string' ? body.error.code : null;
  } catch {
    return null;
  }
}

function decodePart(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

export interface AuditMiddlewareOptions {
  /**
   * #35 (AUTH_MODE=oidc): a request refused without a verified principal (no token, a bad or expired one) is
   * counted in one row per source address and minute (AuditLog.recordAnonymousRefusal), not given a row of its own:
   * anyone can send them. With auth off every caller is anonymous and each operation keeps its row.
   */
  aggregateAnonymousRefusals?: boolean;
}

export function auditMiddleware(audit: AuditLog, log: Logger, options: AuditMiddlewareOptions = {}): MiddlewareHandler {
  const routes = auditedRoutes();
  return async (c, next) => {
    const method = c.req.method === 'HEAD' ? 'GET' : c.req.method;
    let route: AuditedRoute | undefined;
    let match: RegExpExecArray | null = null;
    for (const r of routes) {
      match = r.method === method ? r.pattern.exec(c.req.path) : null;
      if (match) {
        route = r;
        break;
      }
    }
    await next();
    if (!route || !match) return;
    const res = c.res;
    const status = res.status;
    // A device asks every few seconds whether the models changed: "not modified" downloads nothing, and the list
    // of the models (names and versions, no template) is not a download of templates; refusals of it are kept.
    if (status === 304) return;
    if (route.name === 'trainedModels' && status < 400) return;
    if (options.aggregateAnonymousRefusals && status >= 400 && !c.get('principal')) {
      try {
        await audit.recordAnonymousRefusal({ ip: ipOf(c), endpoint: route.name, status });
      } catch (err) {
        log.error(
          `audit log: could not count a refused request (${c.req.method} ${c.req.path}): ${err instanceof Error ? err.message : String(err)}`,
          {
            request_id: c.get('requestId'),
          },
        );
      }
      return;
    }
    const pathParams = route.params.map((p, i) => [p, decodePart(match[i + 1])] as const);
    const fromPath = pathParams.find(([p]) => p === 'label' || p === 'id')?.[1] ?? pathParams[0]?.[1] ?? null;
    let target: string | null = c.get('auditTarget') ?? fromPath;
    if (!target && status < 300 && LABEL_IN_ANSWER.has(route.action)) target = await labelInAnswer(res);
    const detail: AuditEntry['detail'] = { method, endpoint: route.name, status };
    const filename = pathParams.find(([p]) => p === 'filename')?.[1];
    if (filename) detail.filename = filename;
    if (status >= 400) {
      const code = await errorCodeOf(res);
      if (code) detail.error = code;
    }
    const added = c.get('auditDetail');
    if (added) for (const [key, value] of Object.entries(added)) if (!(key in detail)) detail[key] = value;
    const entry: AuditEntry = {
      action: route.action,
      outcome: outcomeOf(status),
      ...actorOf(c),
      ip: ipOf(c),
      target: target ? target.slice(0, 200) : null,
      detail,
    };
    try {
      await audit.record(entry);
    } catch (err) {
      log.error(
        `audit log: could not record ${entry.action} (${c.req.method} ${c.req.path}): ${err instanceof Error ? err.message : String(err)}`,
        {
          request_id: c.get('requestId'),
        },
      );
    }
  };
}
