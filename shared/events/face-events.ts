/**
 * The events of the face pipeline (spec "Events"), published by the processor to `cv.face.detections` and
 * consumed by it to mail the right team. Field names and types are the spec's, exactly; anything else a
 * message carries (its id) travels in Kafka headers so the JSON stays as specified.
 */
import { z } from 'zod';
import { modelConfigStatus } from '../kserve/protocol.js';

/** ISO 8601 in UTC with milliseconds, as `Date.prototype.toISOString` writes it. */
export const isoUtcTimestamp = z.string().regex(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/, 'an ISO 8601 UTC timestamp');

const common = {
  timestamp: isoUtcTimestamp,
  source: z.string(),
  camera_id: z.string(),
};

export const personRegisteredEvent = z.object({
  event_type: z.literal('person_registered'),
  ...common,
  person_name: z.string().min(1),
  face_count: z.number().int().min(0),
  detection_method: z.string(),
});
export type PersonRegisteredEvent = z.infer<typeof personRegisteredEvent>;

export const remoteModelStatusEvent = z.object({
  event_type: z.literal('remote_model_status'),
  ...common,
  model_name: z.string().min(1),
  model_server: z.string(),
  /** The model server's `/v1/config` answer as received; `{}` when it could not be reached. */
  remote_response: z.union([modelConfigStatus, z.record(z.string(), z.unknown())]),
  /** Present (false) only when the model server could not be reached. */
  reachable: z.literal(false).optional(),
});
export type RemoteModelStatusEvent = z.infer<typeof remoteModelStatusEvent>;

export const faceEvent = z.discriminatedUnion('event_type', [personRegisteredEvent, remoteModelStatusEvent]);
export type FaceEvent = z.infer<typeof faceEvent>;
export type FaceEventType = FaceEvent['event_type'];

/** Kafka header naming a message's id: the processor's mail ledger keys on it. */
export const EVENT_ID_HEADER = 'event_id';

/**
 * The state of a remote model as its `/v1/config` answer gives it: its versions' states joined (`AVAILABLE`,
 * `LOADING`, `AVAILABLE,END`), `missing` when the answer does not list it, `unreachable` when there was none.
 * Mails about the model go out when this changes.
 */
export function remoteModelState(event: RemoteModelStatusEvent): string {
  if (event.reachable === false) return 'unreachable';
  const entry = (event.remote_response as Record<string, { model_version_status?: { state?: unknown }[] }>)[event.model_name];
  const states = Array.isArray(entry?.model_version_status) ? entry.model_version_status.map((v) => String(v?.state ?? '?')) : [];
  return states.length ? [...new Set(states)].sort().join(',') : 'missing';
}
