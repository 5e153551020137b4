/**
 * Loads a tfjs weights manifest (`<model>-weights_manifest.json` plus its `.bin` shards) through a
 * host-supplied file reader, so one loader serves both hosts: Node reads the model folder from disk, the
 * browser fetches `/models/face-api/<file>`. Nothing here touches the network or the file system itself.
 */

/** One tensor's entry in a weights manifest (tfjs `WeightsManifestEntry`, quantization included). */
export interface WeightSpec {
  name: string;
  shape: number[];
  dtype: string;
  quantization?: { dtype: string; scale?: number; min?: number; [key: string]: unknown };
}

interface ManifestGroup {
  paths: string[];
  weights: WeightSpec[];
}

/** Reads one file of the model folder by its plain name (e.g. `face_recognition_model.bin`). */
export type ReadModelFile = (name: string) => Promise<ArrayBuffer | Uint8Array>;

/** The part of tfjs the loader needs: decoding shards into named tensors. */
export interface WeightDecoder<T> {
  io: { decodeWeights(data: ArrayBuffer, specs: WeightSpec[]): Record<string, T> };
}

// Shard names come from a file we read: keep them to plain names so a manifest cannot reach outside its folder.
const PLAIN_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;

function toArrayBuffer(bytes: ArrayBuffer | Uint8Array): ArrayBuffer {
  if (bytes instanceof ArrayBuffer) return bytes;
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
}

function parseManifest(modelName: string, text: string): ManifestGroup[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new Error(`${modelName}: weights manifest is not valid JSON (${(err as Error).message})`);
  }
  if (!Array.isArray(json) || json.length === 0) throw new Error(`${modelName}: weights manifest must be a non-empty array`);
  return json.map((g: unknown, i) => {
    const group = g as Partial<ManifestGroup>;
    if (!group || !Array.isArray(group.paths) || !Array.isArray(group.weights)) {
      throw new Error(`${modelName}: weights manifest group ${i} needs "paths" and "weights" arrays`);
    }
    for (const p of group.paths) {
      if (typeof p !== 'string' || !PLAIN_NAME.test(p)) {
        throw new Error(`${modelName}: weights manifest names shard ${JSON.stringify(p)}; only plain file names are allowed`);
      }
    }
    return group as ManifestGroup;
  });
}

/**
 * Reads `<modelName>-weights_manifest.json` and its shards and decodes them into named tensors of the given
 * tfjs instance. Errors name the model and file, so a missing or truncated copy is easy to spot.
 */
export async function loadWeightMap<T>(tf: WeightDecoder<T>, readModelFile: ReadModelFile, modelName: string): Promise<Record<string, T>> {
  const manifestName = `${modelName}-weights_manifest.json`;
  const manifestBytes = await readModelFile(manifestName).catch((err: unknown) => {
    throw new Error(`${modelName}: cannot read ${manifestName} (${err instanceof Error ? err.message : String(err)})`);
  });
  const groups = parseManifest(modelName, new TextDecoder().decode(manifestBytes));
  const map: Record<string, T> = {};
  for (const group of groups) {
    const shards = await Promise.all(
      group.paths.map((p) =>
        readModelFile(p).then(toArrayBuffer, (err: unknown) => {
          throw new Error(`${modelName}: cannot read ${p} (${err instanceof Error ? err.message : String(err)})`);
        }),
      ),
    );
    const total = shards.reduce((n, s) => n + s.byteLength, 0);
    const expected = group.weights.reduce((n, w) => n + specBytes(w), 0);
    if (total !== expected) {
      throw new Error(`${modelName}: ${group.paths.join(', ')} hold ${total} bytes, the manifest describes ${expected}`);
    }
    const joined = new Uint8Array(total);
    let offset = 0;
    for (const s of shards) {
      joined.set(new Uint8Array(s), offset);
      offset += s.byteLength;
    }
    Object.assign(map, tf.io.decodeWeights(joined.buffer, group.weights));
  }
  return map;
}

const DTYPE_BYTES: Record<string, number> = { float32: 4, int32: 4, bool: 1, uint8: 1, uint16: 2, float16: 2 };

/** Bytes a weight takes in the shard: its quantized dtype when quantized, else its own dtype. */
function specBytes(spec: WeightSpec): number {
  const dtype = spec.quantization?.dtype ?? spec.dtype;
  const bytes = DTYPE_BYTES[dtype];
  if (bytes === undefined) throw new Error(`weight ${spec.name}: unsupported dtype ${dtype}`);
  return spec.shape.reduce((n, d) => n * d, 1) * bytes;
}
