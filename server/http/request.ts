/** Reading request bodies with every failure turned into a clear 4xx. */
import type { Context } from 'hono';
import type { z } from 'zod';
import { ApiError } from './errors.js';

/** Parses a JSON body against a schema. Empty body: `{}` when `emptyAs` is given, else 400. */
export async function readJson<T extends z.ZodType>(c: Context, schema: T, emptyAs?: unknown): Promise<z.output<T>> {
  const type = c.req.header('content-type') ?? '';
  const text = await c.req.text();
  let body: unknown;
  if (text.trim() === '') {
    if (emptyAs === undefined) throw new ApiError('missing_field', 'the request body is empty; send a JSON object');
    body = emptyAs;
  } else {
    if (type && !/^application\/(.+\+)?json\b/i.test(type) && !/^text\/plain\b/i.test(type)) {
      throw new ApiError('unsupported_media_type', `send the body as application/json (got ${type.split(';')[0]})`);
    }
    try {
      body = JSON.parse(text);
    } catch {
      throw new ApiError('invalid_json', 'the request body is not valid JSON');
    }
  }
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue.path.length ? `field "${issue.path.join('.')}": ` : '';
    const message =
      typeof body !== 'object' || body === null || Array.isArray(body) ? 'the body must be a JSON object' : `${where}${issue.message}`;
    throw new ApiError('bad_request', message);
  }
  return parsed.data;
}
