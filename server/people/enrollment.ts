/**
 * Enrollment on the server (issue #26 §3): what `POST /api/images` keeps beside the image (the photo check, the
 * original file name, the display name, the picked face) and what the listings add (`GET /api/labels`,
 * `GET /api/images/{label}`: display names, per-file metadata, the per-person summary). The routes
 * (server/routes/images.ts, labels.ts, enrollment.ts) call these.
 */
import type { z } from 'zod';
import { displayNameField, pickedFaceBox, type FaceBoxBody } from '../../shared/api/enrollment.js';
import type { ImageUploadResponse, LabelImagesResponse, LabelSummary, StoredImage } from '../../shared/api/index.js';
import { enrollmentSummary, type PhotoCheck, type PhotoVerdict, toRect } from '../../shared/recognition/photo-check.js';
import type { AppContext } from '../http/context.js';
import { ApiError } from '../http/errors.js';

/** What an upload may carry beyond the label and the image. */
export interface UploadExtras {
  originalName: string | null;
  displayName?: string;
  face?: FaceBoxBody;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: removing control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;

/** The uploader's file name as kept: its last path segment, NFC, no control characters, at most 255 characters. */
export function originalName(raw: string | undefined | null): string | null {
  if (typeof raw !== 'string') return null;
  const name = raw.normalize('NFC').replace(CONTROL, '').split(/[/\\]/).pop()!.trim().slice(0, 255);
  return name.length ? name : null;
}

/** The display name when none was sent: the label as typed, trimmed, spaces collapsed ("Marie  Curie" -> "Marie Curie"). */
export function defaultDisplayName(rawLabel: string): string {
  return rawLabel.normalize('NFC').replace(CONTROL, '').trim().replace(/\s+/g, ' ').slice(0, 100);
}

function fieldError(field: string, error: z.ZodError): ApiError {
  const issue = error.issues[0];
  const where = issue.path.length ? `${field}.${issue.path.join('.')}` : field;
  return new ApiError('bad_request', `field "${where}": ${issue.message}`);
}

/** `display_name` and `face` of a multipart upload (text parts; `face` as JSON), and the file part's name. */
export function multipartExtras(form: Record<string, string | File | (string | File)[]>, file: File): UploadExtras {
  const extras: UploadExtras = { originalName: originalName(file.name) };
  const text = (name: string): string | undefined => {
    const v = form[name];
    if (v === undefined) return undefined;
    if (Array.isArray(v)) throw new ApiError('bad_request', `send one "${name}" part`);
    if (typeof v !== 'string') throw new ApiError('bad_request', `"${name}" must be a text part, not a file`);
    return v;
  };
  const display = text('display_name');
  if (display !== undefined) {
    const parsed = displayNameField.safeParse(display);
    if (!parsed.success) throw fieldError('display_name', parsed.error);
    extras.displayName = parsed.data;
  }
  const face = text('face');
  if (face !== undefined) {
    let value: unknown;
    try {
      value = JSON.parse(face);
    } catch {
      throw new ApiError('bad_request', 'field "face": must be JSON {"x","y","w","h"} (whole pixels)');
    }
    const parsed = pickedFaceBox.safeParse(value);
    if (!parsed.success) throw fieldError('face', parsed.error);
    extras.face = parsed.data;
  }
  return extras;
}

/**
 * Checks, stores and records one training image: the photo check in a vision worker (an answer field, never an
 * error), the picked face's region when `face` is given (400 and nothing stored when it is outside the image or
 * matches no face found), the image (idempotent with `capture_id`), then its metadata and the person's display name.
 */
export async function storeTrainingImage(
  ctx: AppContext,
  upload: { label: string; rawLabel: string; bytes: Uint8Array; capture?: string; extras: UploadExtras },
): Promise<ImageUploadResponse> {
  const { label, capture, extras } = upload;
  // Decoded whole (a truncated image is refused), checked, and the pixels let go: only bytes are stored.
  const prepared = await ctx.decoder.use(upload.bytes, async (image) => {
    const { rgb, format } = image;
    const { check } = await ctx.photoChecks.check(image, extras.face);
    if (!extras.face || !check.face) return { bytes: upload.bytes, format, check };
    return { bytes: await ctx.photoChecks.pickedImage(rgb, toRect(check.face)), format: 'jpeg', check };
  });
  const { bytes, format, check } = prepared;
  let filename: string;
  let duplicate: boolean | undefined;
  if (capture === undefined) {
    filename = await ctx.images.save(label, bytes, format);
    ctx.log.info(`stored image ${label}/${filename} (${bytes.length} bytes, check ${check.verdict})`);
  } else {
    // A re-sent capture (a kiosk retrying after a lost answer) is answered like the first, and stored once.
    ({ filename, duplicate } = await ctx.images.saveCapture(label, bytes, format, capture));
    if (duplicate) ctx.log.info(`image ${label}/${filename} was already stored (capture_id ${capture})`);
    else ctx.log.info(`stored image ${label}/${filename} (${bytes.length} bytes, check ${check.verdict})`);
  }
  let displayName = extras.displayName ?? defaultDisplayName(upload.rawLabel);
  try {
    if (extras.displayName !== undefined) await ctx.people.upsert(label, extras.displayName);
    else await ctx.people.ensure(label, displayName);
    // A capture sent again keeps the first upload's record.
    await ctx.people.setImageMeta(
      label,
      filename,
      { original_name: extras.originalName, source: 'upload', photo_check: check },
      { keep: duplicate === true },
    );
    displayName = (await ctx.people.get(label))?.display_name ?? displayName;
  } catch (err) {
    // The image is stored (training will use it): a database that does not answer loses its name and check
    // (the listings then show it as not checked), not the upload, which a client would send again.
    ctx.log.error(`image ${label}/${filename} stored, but its metadata was not: ${err instanceof Error ? err.message : String(err)}`);
  }
  return {
    status: 'ok',
    label,
    filename,
    path: `images/${label}/${filename}`,
    ...(duplicate === undefined ? {} : { duplicate }),
    check,
    display_name: displayName,
    original_name: extras.originalName,
  };
}

/** `GET /api/images/{label}`: the files with their metadata, the display name and the summary. */
export async function labelImagesAnswer(ctx: AppContext, label: string, images: StoredImage[]): Promise<LabelImagesResponse> {
  const [meta, person] = await Promise.all([ctx.people.imageMeta(label), ctx.people.get(label)]);
  const files = images.map((image) => {
    const m = meta.get(image.filename);
    return {
      ...image,
      original_name: m?.original_name ?? null,
      source: m?.source ?? 'unknown',
      check: (m?.photo_check as PhotoCheck | null) ?? null,
    };
  });
  return {
    label,
    images: images.map((i) => i.filename),
    files,
    count: images.length,
    display_name: person?.display_name ?? label,
    enrollment: enrollmentSummary(files.map((f) => f.check?.verdict ?? null)),
  };
}

/** `GET /api/labels`' details with each person's display name and summary (from the files on disk). */
export async function labelDetails(
  ctx: AppContext,
  details: { label: string; images: number; trained: boolean }[],
): Promise<(LabelSummary & { display_name: string })[]> {
  const [names, verdicts, refs] = await Promise.all([ctx.people.displayNames(), ctx.people.verdicts(), ctx.images.all()]);
  const filesOf = new Map<string, string[]>();
  for (const ref of refs) {
    const list = filesOf.get(ref.label);
    if (list) list.push(ref.filename);
    else filesOf.set(ref.label, [ref.filename]);
  }
  return details.map((d) => {
    const byFile = verdicts.get(d.label);
    const files = filesOf.get(d.label) ?? [];
    return {
      ...d,
      display_name: names.get(d.label) ?? d.label,
      enrollment: enrollmentSummary(files.map((f) => (byFile?.get(f) as PhotoVerdict | null | undefined) ?? null)),
    };
  });
}
