/** The first schema: sightings and their review, corrections, results, the audit log, people and image metadata. */
import type { Migration } from './index.js';

export const initial: Migration = {
  version: 1,
  name: 'initial',
  sql: `
-- One face seen by a recognition (API, a page, a camera, a browser's synced result, a verification).
CREATE TABLE sightings (
  id text PRIMARY KEY,
  seen_at timestamptz NOT NULL,
  source text NOT NULL,
  client text,
  camera text,
  label text,
  candidate text,
  distance double precision,
  confidence double precision,
  certainty text,
  reason text,
  recognizer text NOT NULL,
  model_version text,
  box jsonb NOT NULL,
  crop text NOT NULL,
  crop_bytes integer NOT NULL DEFAULT 0,
  descriptor bytea,
  group_id text,
  dismissed_at timestamptz,
  assigned_label text,
  assigned_filename text,
  assigned_action text
);
CREATE INDEX sightings_seen_at ON sightings (seen_at DESC);
CREATE INDEX sightings_label ON sightings (label, seen_at DESC);
CREATE INDEX sightings_group ON sightings (group_id);

-- What a reviewer did on the Faces page (assign, dismiss, correct), kept for undo until the next training.
CREATE TABLE review_actions (
  id text PRIMARY KEY,
  kind text NOT NULL,
  created_at timestamptz NOT NULL,
  actor text,
  label text,
  sighting_ids jsonb NOT NULL,
  detail jsonb NOT NULL DEFAULT '{}',
  undone_at timestamptz
);

-- "Not this person": a face's features that must not be given this label again.
CREATE TABLE corrections (
  id text PRIMARY KEY,
  label text NOT NULL,
  sighting_id text,
  action_id text,
  created_at timestamptz NOT NULL,
  actor text,
  recognizer text NOT NULL,
  descriptor_model text,
  feature bytea NOT NULL
);
CREATE INDEX corrections_label ON corrections (label);

-- Results computed on devices and sent to POST /api/results; the record as sent, beside what queries filter on.
CREATE TABLE results (
  seq bigserial PRIMARY KEY,
  id text NOT NULL UNIQUE,
  kind text NOT NULL,
  received_at timestamptz NOT NULL,
  captured_at timestamptz,
  labels text[] NOT NULL DEFAULT '{}',
  record jsonb NOT NULL
);
CREATE INDEX results_received ON results (received_at DESC);

-- Ids of results dropped by the cap, still recognised as duplicates when re-sent.
CREATE TABLE results_forgotten (
  id text PRIMARY KEY,
  forgotten_at timestamptz NOT NULL
);

-- Biometric operations: append-only (updates refused; deletes only by the retention purge, which says so).
CREATE TABLE audit_log (
  seq bigserial PRIMARY KEY,
  at timestamptz NOT NULL DEFAULT now(),
  action text NOT NULL,
  outcome text NOT NULL DEFAULT 'ok',
  actor text,
  actor_kind text NOT NULL,
  ip text,
  target text,
  detail jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX audit_log_at ON audit_log (at DESC);
CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' AND current_setting('lookout.audit_purge', true) = 'on' THEN
    RETURN OLD;
  END IF;
  RAISE EXCEPTION 'the audit log is append-only';
END $$;
CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log
  FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();

-- A person's name as typed ("Marie Curie") beside the stable label (marie-curie), and whether kiosks get them.
CREATE TABLE people (
  label text PRIMARY KEY,
  display_name text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  kiosk boolean NOT NULL DEFAULT true
);

-- Per stored training image: the file name it was uploaded as, where it came from, and its photo check.
CREATE TABLE image_meta (
  label text NOT NULL,
  filename text NOT NULL,
  original_name text,
  uploaded_at timestamptz NOT NULL DEFAULT now(),
  source text NOT NULL DEFAULT 'upload',
  sighting_id text,
  photo_check jsonb,
  PRIMARY KEY (label, filename)
);

-- People deleted, so devices drop what they still hold of them at their next sync.
CREATE TABLE deleted_people (
  seq bigserial PRIMARY KEY,
  label text NOT NULL,
  deleted_at timestamptz NOT NULL
);
`,
};
