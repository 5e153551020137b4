/**
 * #35: requests refused without a verified principal (no token, a bad one) are one audit row per source address and
 * minute with a count (server/audit/audit-log.ts recordAnonymousRefusal), not one row each: anyone could grow the
 * log. The count is the one change the append-only trigger lets through, and only that: a larger `count` of such a
 * row, every other column and detail key as it was, inside a transaction that says so (`lookout.audit_count`).
 */
import type { Migration } from './index.js';

export const auditAnonymous: Migration = {
  version: 4,
  name: 'audit-anonymous',
  sql: `
CREATE UNIQUE INDEX audit_log_anonymous_minute ON audit_log (at, (coalesce(ip, '')), (coalesce(detail->>'overflow', '')))
  WHERE action = 'anonymous_refused';
CREATE OR REPLACE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' AND current_setting('lookout.audit_purge', true) = 'on' THEN
    RETURN OLD;
  END IF;
  IF TG_OP = 'UPDATE' AND current_setting('lookout.audit_count', true) = 'on'
     AND OLD.action = 'anonymous_refused'
     AND (NEW.seq, NEW.at, NEW.action, NEW.outcome, NEW.actor_kind) = (OLD.seq, OLD.at, OLD.action, OLD.outcome, OLD.actor_kind)
     AND NEW.actor IS NOT DISTINCT FROM OLD.actor AND NEW.ip IS NOT DISTINCT FROM OLD.ip
     AND NEW.target IS NOT DISTINCT FROM OLD.target
     AND (NEW.detail - 'count' - 'last_endpoint' - 'last_status') = (OLD.detail - 'count' - 'last_endpoint' - 'last_status')
     AND (NEW.detail->>'count')::bigint > (OLD.detail->>'count')::bigint THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION 'the audit log is append-only';
END $$;
`,
};
