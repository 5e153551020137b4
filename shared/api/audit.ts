/**
 * The audit log of biometric operations (`GET /api/audit`, administrators) and a person's settings
 * (`PUT /api/people/{label}`: whether kiosks get their templates).
 */
import { z } from 'zod';
import { isoTime, storableText, UNSTORABLE_MESSAGE } from './common.js';

export const AUDIT_ACTION_NAMES = [
  'enroll',
  'delete',
  'train',
  'verify',
  'template_download',
  'sighting_access',
  'image_access',
  'correction',
  'review',
  'person_update',
  // #35: a change of the model settings (recognizer, detection method, thresholds), with the old and new values.
  'settings_change',
  // #35: requests refused without a verified principal (no token, a bad one), one row per source and minute.
  'anonymous_refused',
] as const;
export type AuditActionName = (typeof AUDIT_ACTION_NAMES)[number];

export const AUDIT_OUTCOMES = ['ok', 'denied', 'refused', 'error'] as const;
export const AUDIT_ACTOR_KINDS = ['user', 'client', 'anonymous'] as const;
export const AUDIT_LIMIT_MAX = 200;

const time = (what: string) =>
  z.iso
    .datetime({ offset: true, error: 'must be an ISO 8601 time such as 2024-05-01T12:00:00.000Z' })
    .optional()
    .meta({ description: what });

export const auditQuery = z.object({
  action: z
    .enum(AUDIT_ACTION_NAMES, { error: `must be one of ${AUDIT_ACTION_NAMES.join(', ')}` })
    .optional()
    .meta({ description: 'Only this operation.' }),
  actor: z
    .string()
    .max(200, 'must be at most 200 characters')
    .refine(storableText, UNSTORABLE_MESSAGE)
    .optional()
    .meta({ description: "Only this user's name or client's id." }),
  from: time('Entries at or after this time (ISO 8601).'),
  to: time('Entries before this time (ISO 8601).'),
  limit: z.coerce
    .number({ error: 'must be a number' })
    .int('must be a whole number')
    .min(1, 'must be at least 1')
    .max(AUDIT_LIMIT_MAX, `must be at most ${AUDIT_LIMIT_MAX}`)
    .optional()
    .meta({ description: `Entries per page (default 50, at most ${AUDIT_LIMIT_MAX}).` }),
  cursor: z.string().max(100, 'must be at most 100 characters').optional().meta({ description: '`next_cursor` of the previous page.' }),
});
export type AuditQuery = z.infer<typeof auditQuery>;

export const auditEntry = z
  .object({
    id: z.number().int().meta({ description: 'Increasing with time.' }),
    at: isoTime,
    action: z.enum(AUDIT_ACTION_NAMES),
    outcome: z.enum(AUDIT_OUTCOMES).meta({
      description: '`ok` (2xx), `denied` (401/403: no token, a bad one, a role missing), `refused` (another 4xx), `error` (5xx).',
    }),
    actor: z.string().nullable().meta({ description: "The user's name or the client's id; null when anonymous (AUTH_MODE=off)." }),
    actor_kind: z.enum(AUDIT_ACTOR_KINDS),
    ip: z.string().nullable().meta({ description: 'The address the request came from.' }),
    target: z.string().nullable().meta({ description: 'The person (label) or item it was about, when one is known.' }),
    detail: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])).meta({
      description:
        'Method, endpoint, status, error code; never an image, a template or a secret. `settings_change`: `old.<key>` and `new.<key>` for each value changed (`recognition_model`, `detection_method`, or a threshold such as `max`; null: none). `anonymous_refused` (AUTH_MODE=oidc; one row per source address and minute, `at` the start of the minute): `count`, the refused requests from `ip` in that minute, and `last_endpoint`, `last_status` of the latest; once 50 addresses have a row in a minute, one row with `overflow: true` and `ip` null counts the rest.',
    }),
  })
  .meta({
    id: 'AuditEntry',
    example: {
      id: 42,
      at: '2024-05-01T12:00:00.000Z',
      action: 'enroll',
      outcome: 'ok',
      actor: 'alice',
      actor_kind: 'user',
      ip: '127.0.0.1',
      target: 'grace-hopper',
      detail: { method: 'POST', endpoint: 'uploadImage', status: 200 },
    },
  });
export type AuditEntryBody = z.infer<typeof auditEntry>;

export const auditResponse = z
  .object({
    entries: z.array(auditEntry).meta({ description: 'Newest first.' }),
    next_cursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null on the last one.' }),
    retention_days: z.number().int().meta({ description: 'Entries older than this are purged (AUDIT_RETENTION_DAYS).' }),
  })
  .meta({ id: 'AuditResponse' });
export type AuditResponse = z.infer<typeof auditResponse>;

export const personUpdateRequest = z
  .object({
    kiosk: z
      .boolean({ error: 'must be true or false' })
      .meta({ description: "Whether this person's templates are in the trained models that devices download (their kiosk gallery)." }),
  })
  .meta({ id: 'PersonUpdateRequest' });

export const personResponse = z
  .object({
    label: z.string(),
    display_name: z.string(),
    kiosk: z.boolean(),
  })
  .meta({ id: 'Person', example: { label: 'alice-smith', display_name: 'alice-smith', kiosk: false } });
export type PersonResponse = z.infer<typeof personResponse>;
