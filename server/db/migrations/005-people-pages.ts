/**
 * #36 2: a person's page. `people.cover`: the file name of the photo that stands for them (null: the first one);
 * `person_actions`: rename, cover, merge and move-photos, each with what its undo needs (`detail`), kept apart from
 * the review's actions (the Faces page) because they undo differently (files move back, not away).
 */
import type { Migration } from './index.js';

export const peoplePages: Migration = {
  version: 5,
  name: 'people-pages',
  sql: `
ALTER TABLE people ADD COLUMN cover text;
CREATE TABLE person_actions (
  id text PRIMARY KEY,
  kind text NOT NULL,
  created_at timestamptz NOT NULL,
  actor text,
  label text NOT NULL,
  other_label text,
  detail jsonb NOT NULL DEFAULT '{}',
  undone_at timestamptz
);
CREATE INDEX person_actions_label ON person_actions (label, created_at DESC);
CREATE INDEX person_actions_other ON person_actions (other_label, created_at DESC);
`,
};
