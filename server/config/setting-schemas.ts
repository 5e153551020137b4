/**
 * The value types settings are parsed with, shared by every concern's table (and the IdP's settings). Each
 * parses a string from the environment, so defaults are strings too.
 */
import { z } from 'zod';

/** A yes/no setting: true/false, 1/0, yes/no, on/off (any case). Shared with the IdP's settings. */
export const boolean = z
  .string()
  .trim()
  .toLowerCase()
  .pipe(z.enum(['true', 'false', '1', '0', 'yes', 'no', 'on', 'off']))
  .transform((v) => v === 'true' || v === '1' || v === 'yes' || v === 'on');

/** A comma-separated list, parsed by a function that throws a message naming the bad entry. */
export const listOf = (parse: (text: string) => string[]) =>
  z.string().transform((text, ctx) => {
    try {
      return parse(text);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: err instanceof Error ? err.message : String(err) });
      return z.NEVER;
    }
  });

export const httpUrlOrEmpty = z.union([z.literal(''), z.url({ protocol: /^https?$/ })]);
/** A whole number setting within a range. */
export const integer = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
export const number = (min: number, max: number) => z.coerce.number().min(min).max(max);

/** Sizes as Kubernetes writes them (`1Gi`, `500Mi`, `10M`) or plain bytes. */
export const quantity = z
  .string()
  .trim()
  .regex(/^\d+(\.\d+)?(Ki|Mi|Gi|Ti|K|M|G|T)?$/, 'a size such as 1Gi, 500Mi or 1048576');

/** Recognition model identifiers, with the original service's alias accepted on input. */
export const recognitionModelInput = z
  .string()
  .trim()
  .toLowerCase()
  .transform((v) => (v === 'dlib' ? 'embedding' : v))
  .pipe(z.enum(['lbph', 'embedding']));

/** Detection method identifiers, with the original service's aliases accepted on input. */
export const detectionMethodInput = z
  .string()
  .trim()
  .toLowerCase()
  .transform((v) => (v === 'opencv' ? 'local' : v === 'openvino' ? 'remote' : v))
  .pipe(z.enum(['local', 'remote']));

/** One row of a settings table. */
export interface SettingSpec {
  env: string;
  schema: z.ZodType;
  default: string | undefined;
  /** Its row's meaning in docs/settings.md (checked equal by settings-docs.test.ts) and the tail of its error message. */
  doc: string;
}
