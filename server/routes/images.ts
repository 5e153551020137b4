/**
 * Training images per label: POST /api/images (multipart `label` + `file`, or JSON `{ label, image }`),
 * GET /api/images/{label} to list, DELETE to remove, GET /api/images/{label}/{filename} for the bytes (DELETE: that one
 * image).
 * An image is fully decoded (within the pixel budget) before it is stored, so training never meets a file it cannot
 * read: a truncated file, or one whose data ends before its pixels do, is refused with 400 and nothing is stored. An optional
 * `capture_id` (multipart text part or JSON field) makes the upload idempotent: stored as `<capture_id>.<ext>`,
 * and a repeated upload of it for the same label stores nothing and answers `duplicate: true`.
 */
import { Hono } from 'hono';
import { captureId, imageUploadJson } from '../../shared/api/index.js';
import { normalizeLabel } from '../../shared/api/labels.js';
import type { AppContext } from '../http/context.js';
import { ApiError } from '../http/errors.js';
import { ClientAbortError, isClientAbort, readJson } from '../http/request.js';
import { mountRoute } from '../http/route.js';
import { decodeBase64Image } from '../imaging/decode.js';
import { forgetPerson } from '../deletion/forget-person.js';
// #26 enrollment
import { labelImagesAnswer, multipartExtras, originalName, storeTrainingImage, type UploadExtras } from '../people/enrollment.js';

const CONTENT_TYPES: Record<string, string> = {
  jpg: 'image/jpeg',
  png: 'image/png',
  webp: 'image/webp',
  gif: 'image/gif',
  tif: 'image/tiff',
  avif: 'image/avif',
  heic: 'image/heif',
};

function checkedCaptureId(raw: unknown): string | undefined {
  if (raw === undefined) return undefined;
  if (Array.isArray(raw)) throw new ApiError('bad_request', 'send one "capture_id" part');
  if (typeof raw !== 'string') throw new ApiError('bad_request', '"capture_id" must be a text part, not a file');
  const parsed = captureId.safeParse(raw);
  if (!parsed.success) throw new ApiError('bad_request', `field "capture_id": ${parsed.error.issues[0].message}`);
  return parsed.data;
}

function checkedLabel(raw: unknown): string {
  const check = normalizeLabel(raw);
  if (!check.ok) throw new ApiError('invalid_label', check.reason);
  return check.label;
}

export function imageRoutes(ctx: AppContext): Hono {
  const app = new Hono();

  // Multipart or JSON: the route reads its own body (the table documents both types).
  mountRoute(app, 'uploadImage', async (c) => {
    const type = c.req.header('content-type') ?? '';
    let rawLabel: unknown;
    let capture: string | undefined;
    let bytes: Uint8Array;
    // #26 enrollment: the original file name, display name and picked face
    let extras: UploadExtras;
    if (/^multipart\/form-data/i.test(type)) {
      let form: Record<string, string | File | (string | File)[]>;
      try {
        form = await c.req.parseBody({ all: true });
      } catch (err) {
        if (isClientAbort(c, err)) throw new ClientAbortError();
        throw new ApiError('bad_request', 'the multipart body could not be read');
      }
      rawLabel = form.label;
      if (Array.isArray(rawLabel)) throw new ApiError('bad_request', 'send one "label" part');
      if (rawLabel === undefined) throw new ApiError('missing_field', 'the "label" part (the person\'s name) is missing');
      capture = checkedCaptureId(form.capture_id);
      const file = form.file ?? form.image;
      if (Array.isArray(file)) throw new ApiError('bad_request', 'send one image per request in the "file" part');
      if (!(file instanceof File)) throw new ApiError('missing_field', 'the "file" part with the image is missing');
      bytes = new Uint8Array(await file.arrayBuffer());
      if (bytes.length === 0) throw new ApiError('invalid_image', 'the uploaded file is empty');
      extras = multipartExtras(form, file);
    } else if (/json/i.test(type)) {
      const body = await readJson(c, imageUploadJson);
      rawLabel = body.label;
      capture = body.capture_id;
      bytes = decodeBase64Image(body.image);
      extras = { originalName: originalName(body.filename), displayName: body.display_name, face: body.face };
    } else {
      throw new ApiError('unsupported_media_type', 'send multipart/form-data with parts "label" and "file", or JSON { "label", "image" }');
    }
    const label = checkedLabel(rawLabel);
    // #26 enrollment: decoded whole, checked (the answer's `check`), stored (once per capture_id), recorded.
    return storeTrainingImage(ctx, { label, rawLabel: rawLabel as string, bytes, capture, extras });
  });

  mountRoute(app, 'labelImages', async (_c, { params }) => {
    const label = checkedLabel(params.label);
    // A label with no images is an empty list, as the original answered (its clients list before the first upload).
    const images = (await ctx.images.list(label)) ?? [];
    // #26 enrollment: per file its original name, source and check; the display name and the summary
    return labelImagesAnswer(ctx, label, images);
  });

  mountRoute(app, 'imageFile', async (c, { params }) => {
    const label = checkedLabel(params.label);
    // Never through a symbolic link planted in the folder (server/storage/no-follow.ts).
    const bytes = await ctx.images.read(label, params.filename);
    if (!bytes) throw new ApiError('not_found', 'no such image');
    const ext = params.filename.slice(params.filename.lastIndexOf('.') + 1);
    return c.body(new Uint8Array(bytes), 200, {
      'content-type': CONTENT_TYPES[ext] ?? 'application/octet-stream',
      'cache-control': 'private, max-age=3600',
    });
  });

  // One bad photo goes without the person: the name was checked by the route table (a stored name, never a path).
  mountRoute(app, 'deleteImage', async (_c, { params }) => {
    const label = checkedLabel(params.label);
    const left = await ctx.images.removeOne(label, params.filename);
    if (left === null) {
      if (!(await ctx.images.list(label))) throw new ApiError('label_not_found', `there are no images for label "${label}"`);
      throw new ApiError('not_found', `label "${label}" has no image "${params.filename}"`);
    }
    ctx.log.info(`deleted image ${label}/${params.filename} (${left} left)`);
    // #26 enrollment: its metadata goes with it
    await ctx.people.removeImageMeta(label, params.filename);
    return { status: 'ok' as const, label, filename: params.filename, remaining: left, retrain_needed: ctx.faces.trainedLabels.has(label) };
  });

  // #26 deletion: the person everywhere (server/deletion/forget-person.ts), with what was removed.
  mountRoute(app, 'deleteLabel', async (_c, { params }) => {
    const label = checkedLabel(params.label);
    const removed = await forgetPerson(ctx, ctx.models, label);
    return { status: 'ok' as const, label, deleted: removed.images, retrain_needed: ctx.faces.trainedLabels.has(label), removed };
  });

  return app;
}
