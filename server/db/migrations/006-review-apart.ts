/**
 * #36 1 "these two are different people": pairs of faces (sightings) a reviewer told apart, each kept with the review
 * action that made it (`review_actions`, kind `apart`: its actor, its undo). The grouping never puts the two of a
 * pair in one group (server/review/grouping.ts `apart`). `a` < `b`, so a pair is one row however it was named.
 */
import type { Migration } from './index.js';

export const reviewApart: Migration = {
  version: 6,
  name: 'review-apart',
  sql: `
CREATE TABLE review_apart (
  action_id text NOT NULL,
  a text NOT NULL,
  b text NOT NULL,
  PRIMARY KEY (action_id, a, b)
);
CREATE INDEX review_apart_a ON review_apart (a);
CREATE INDEX review_apart_b ON review_apart (b);
`,
};
