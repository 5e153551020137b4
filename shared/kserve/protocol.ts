/**
 * The KServe V2 inference protocol over REST/JSON, as OpenVINO Model Server speaks it: model descriptor
 * (`GET /v2/models/{name}`), inference (`POST /v2/models/{name}/infer`), and OVMS's `GET /v1/config` status.
 * Schemas validate what a server sends back, so a misbehaving server is a clear error, not a crash.
 */
import { z } from 'zod';

export const V2_DATATYPES = [
  'BOOL',
  'UINT8',
  'UINT16',
  'UINT32',
  'UINT64',
  'INT8',
  'INT16',
  'INT32',
  'INT64',
  'FP16',
  'FP32',
  'FP64',
  'BYTES',
] as const;
export type V2Datatype = (typeof V2_DATATYPES)[number];

const dim = z.number().int().min(-1);

export const tensorMetadata = z.object({
  name: z.string().min(1),
  datatype: z.enum(V2_DATATYPES),
  shape: z.array(dim).min(1),
});
export type TensorMetadata = z.infer<typeof tensorMetadata>;

export const modelMetadata = z.object({
  name: z.string().min(1),
  versions: z.array(z.string()).optional(),
  platform: z.string(),
  inputs: z.array(tensorMetadata).min(1),
  outputs: z.array(tensorMetadata).min(1),
});
export type ModelMetadata = z.infer<typeof modelMetadata>;

export const inferTensor = tensorMetadata.extend({
  data: z.array(z.number()),
  parameters: z.record(z.string(), z.unknown()).optional(),
});
export type InferTensor = z.infer<typeof inferTensor>;

export const inferRequest = z.object({
  id: z.string().optional(),
  inputs: z.array(inferTensor).min(1),
  outputs: z.array(z.object({ name: z.string().min(1) })).optional(),
  parameters: z.record(z.string(), z.unknown()).optional(),
});
export type InferRequest = z.infer<typeof inferRequest>;

export const inferResponse = z.object({
  model_name: z.string(),
  model_version: z.string().optional(),
  id: z.string().optional(),
  outputs: z.array(inferTensor).min(1),
});
export type InferResponse = z.infer<typeof inferResponse>;

/** OVMS `GET /v1/config`: model name -> its versions' states (`AVAILABLE` when servable). */
export const modelConfigStatus = z.record(
  z.string(),
  z.object({
    model_version_status: z.array(
      z.object({
        version: z.string().optional(),
        state: z.string(),
        status: z.object({ error_code: z.string(), error_message: z.string() }).optional(),
      }),
    ),
  }),
);
export type ModelConfigStatus = z.infer<typeof modelConfigStatus>;

/** Number of elements a fully known shape holds. */
export function shapeSize(shape: readonly number[]): number {
  return shape.reduce((n, d) => n * d, 1);
}

/** Whether a concrete shape fits a declared one (-1 in the declaration matches any size). */
export function shapeMatches(declared: readonly number[], actual: readonly number[]): boolean {
  return declared.length === actual.length && declared.every((d, i) => d === -1 || d === actual[i]);
}

/** The KServe V2 error body: `{ "error": "..." }`. */
export interface V2Error {
  error: string;
}
