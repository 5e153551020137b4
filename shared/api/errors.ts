/**
 * The error body every endpoint uses: `{ "error": { "code": "...", "message": "..." } }`.
 * Codes are stable identifiers for programs; messages are sentences for people.
 */
export const ERROR_CODES = {
  bad_request: 400,
  invalid_json: 400,
  invalid_image: 400,
  invalid_label: 400,
  missing_field: 400,
  missing_token: 401,
  invalid_token: 401,
  forbidden_origin: 403,
  insufficient_role: 403,
  // #35: a user verifying another person's label (POST /api/verify)
  not_own_label: 403,
  not_found: 404,
  label_not_found: 404,
  not_trained: 404,
  method_not_allowed: 405,
  training_in_progress: 409,
  model_unavailable: 409,
  no_training_data: 422,
  no_faces_found: 422,
  payload_too_large: 413,
  image_too_large: 413,
  unsupported_media_type: 415,
  host_not_allowed: 421,
  remote_unavailable: 503,
  chat_disabled: 503,
  chat_not_configured: 503,
  llm_unavailable: 503,
  llm_bad_gateway: 502,
  llm_timeout: 504,
  llm_busy: 429,
  // #35: too many verifications by this caller or of this label (POST /api/verify); Retry-After says when
  rate_limited: 429,
  not_ready: 503,
  auth_unavailable: 503,
  // #35: the verification counters (the database) cannot be read: denied, never let through
  rate_limit_unavailable: 503,
  server_busy: 503,
  // #37: the shared state (PostgreSQL, with replicas) cannot be reached: the change was not made; try again
  storage_unavailable: 503,
  detector_unavailable: 503,
  ppe_disabled: 503,
  ppe_not_configured: 503,
  ppe_detector_unavailable: 503,
  ppe_detector_failed: 502,
  ppe_detector_timeout: 504,
  dataset_disabled: 404,
  internal_error: 500,
  // #26 review
  already_trained: 409,
  already_undone: 409,
  already_assigned: 409,
  // #36 1: a group whose faces may be two people is not assigned whole; two faces of one picture are two people
  group_not_coherent: 409,
  same_picture: 409,
  // #36 1: a face marked "not this person" is never assigned to that person
  not_this_person: 409,
  // #36 1: two faces a reviewer marked as different people are never assigned to one person; only faces in review are marked
  different_people: 409,
  not_in_review: 409,
  // #35 9: a new label that looks like an existing person's
  label_confusable: 409,
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

/** The error body's type lives with its schema; re-exported for importers of this module. */
export type { ErrorBody } from './common.js';
