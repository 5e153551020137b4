/**
 * The results history: POST /api/results stores results captured in a browser (1 to 100 per request, all or
 * nothing: one invalid record and none is stored), GET /api/results reads them newest first.
 */
import { Hono } from 'hono';
import {
  resultsPostRequest,
  resultsQuery,
  type ResultRecordInput,
  type ResultsListResponse,
  type ResultsPostResponse,
} from '../../shared/api/contract.js';
import type { AppContext } from '../http/context.js';
import { ApiError } from '../http/errors.js';
import { readJson } from '../http/request.js';

export function resultRoutes(ctx: AppContext): Hono {
  const app = new Hono();

  app.post('/results', async (c) => {
    const body = await readJson(c, resultsPostRequest);
    const records: ResultRecordInput[] = body.results;
    const outcome = await ctx.results.add(records);
    if (outcome.accepted > 0) ctx.log.debug(`results: stored ${outcome.accepted}, ${outcome.duplicates} duplicates, ${outcome.total} kept`);
    return c.json<ResultsPostResponse>({ status: 'ok', ...outcome });
  });

  app.get('/results', (c) => {
    const parsed = resultsQuery.safeParse(c.req.query());
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new ApiError('bad_request', `query parameter "${issue.path.join('.')}": ${issue.message}`);
    }
    const { results, matched } = ctx.results.query(parsed.data);
    return c.json<ResultsListResponse>({ results, count: results.length, matched, total: ctx.results.size, max: ctx.results.max });
  });

  return app;
}
