/**
 * Review of what the service saw (the Faces page): unknown faces grouped by likeness, known sightings by person,
 * assign / dismiss / undo (server/review/review-store.ts, `ctx.review`).
 */
import type { Context } from 'hono';
import { Hono } from 'hono';
import type { AppContext } from '../http/context.js';
import { mountRoute } from '../http/route.js';
import type { CropCheck, ReviewTarget } from '../review/review-store.js';

/** Who acts: the signed-in user or client under AUTH_MODE=oidc, else nobody known. */
function actorOf(c: Context): string | null {
  const principal = c.get('principal');
  return principal ? (principal.username ?? principal.subject) : null;
}

function targetOf(body: { sighting_ids?: string[]; group_id?: string }): ReviewTarget {
  return body.sighting_ids ? { sighting_ids: body.sighting_ids } : { group_id: body.group_id as string };
}

export function reviewRoutes(ctx: AppContext): Hono {
  const app = new Hono();
  const store = ctx.review;
  // An assigned crop is checked as an uploaded photo is (decoded within the pixel budget, the active detector).
  const checkCrop: CropCheck = (bytes) => ctx.decoder.use(bytes, async (image) => (await ctx.photoChecks.check(image)).check);

  mountRoute(app, 'reviewGroups', async (_c, { query }) => {
    // #36 1: faces a faceres-1024 server kept before grouping descriptors existed are described for grouping in the
    // background (below recognition's priority) and join groups at a later look; nothing to do elsewhere.
    void ctx.sightingRecorder.backfillGrouping();
    return store.groups({
      since: query.since ? new Date(query.since) : undefined,
      limit: query.limit,
      // Alike enough to be one person: the distance within which the recognizer would name them (in the grouping
      // descriptor's units: FaceService.groupingMax).
      max: ctx.faces.groupingMax(),
    });
  });

  mountRoute(app, 'reviewPeople', async (_c, { query }) =>
    store.people({
      from: query.from ? new Date(query.from) : undefined,
      to: query.to ? new Date(query.to) : undefined,
      q: query.q,
      limit: query.limit,
    }),
  );

  mountRoute(app, 'reviewAssign', async (c, { body }) => {
    const out = await store.assign(
      { ...targetOf(body), label: body.label, display_name: body.display_name },
      actorOf(c),
      checkCrop,
      ctx.faces.groupingMax(),
    );
    const bad = (out.checks ?? []).filter((x) => x.check && x.check.verdict !== 'ok').length;
    ctx.log.info(
      `review: ${out.added.length} face(s) assigned to ${out.label} (action ${out.action_id}${bad ? `, ${bad} with a photo problem` : ''})`,
    );
    return out;
  });

  mountRoute(app, 'reviewDismiss', async (c, { body }) => store.dismiss(targetOf(body), actorOf(c)));

  // #36 1 "these are different people": kept as pairs the grouping never puts together.
  mountRoute(app, 'reviewApart', async (c, { body }) => store.apart(body, actorOf(c)));

  mountRoute(app, 'reviewActions', async (_c, { query }) => ({ actions: await store.actions(query.limit) }));

  mountRoute(app, 'reviewUndo', async (_c, { params }) => store.undo(params.id));

  return app;
}
