/**
 * LBPH models as OpenCV FileStorage YAML (`training.yml`), the format of
 * `cv2.face.LBPHFaceRecognizer.write()` / `.read()` in OpenCV 4.x.
 *
 * The writer reproduces OpenCV 4.6's emitter (modules/core/src/persistence_yml.cpp): 3-space
 * indents, flow `data: [ ... ]` wrapped past column 71, floats as printf "%.8e" (9 significant
 * digits, enough to round-trip float32) and doubles as "%.16e", integral values as "N.", and
 * .Inf/-.Inf/.Nan. For the same model it writes the same bytes as OpenCV.
 * The reader accepts the YAML subset FileStorage reads and writes (block and flow collections,
 * tags, quoted and plain scalars, comments), including OpenCV's wrapped data arrays.
 *
 * Hand-made, not a YAML library, because this is OpenCV's dialect rather than YAML: a `%YAML:1.0`
 * header (a colon where YAML has a space), `!!opencv-matrix` tags, plain scalars typed as FileStorage
 * types them (017 is octal), and numbers and line breaks exactly as OpenCV writes them. The `yaml`
 * package reads such a file only with warnings and drops the matrix tags, and no general emitter
 * writes the bytes OpenCV writes (the tests compare them with OpenCV's own file).
 *
 * The parts live in yaml/: numbers.ts (OpenCV's number spelling), writer.ts (the emitter and
 * writeLbphYaml) and parser.ts (the FileStorage subset); this module turns parsed nodes into a model.
 * Runs unchanged in Node and browsers (strings in, strings out; or pieces: lbphYamlChunks, readLbphYamlStream).
 */
import { LBPH_DEFAULTS, type LbphLabelInfo, type LbphModel } from './lbph.js';
import { PackingScanner } from './yaml/packed.js';
import { parsePacked, seqItems, YamlError, type YMap, type YValue } from './yaml/parser.js';

export { parseOpenCvYaml } from './yaml/parser.js';
export { lbphYamlBytes, lbphYamlChunks, writeLbphYaml } from './yaml/writer.js';

function asMap(v: YValue, what: string): YMap {
  if (v === null || typeof v !== 'object' || v.kind !== 'map') throw new YamlError(`${what} must be a map`);
  return v;
}

function intField(m: YMap, key: string, what: string): number {
  const v = m.entries.get(key);
  if (v === undefined || v === null) throw new YamlError(`${what} has no "${key}"`);
  if (typeof v !== 'number' || !Number.isInteger(v)) throw new YamlError(`${what}: "${key}" must be an integer, got ${JSON.stringify(v)}`);
  return v;
}

interface Matrix {
  rows: number;
  cols: number;
  dt: string;
  data: ArrayLike<number>;
}

function readMatrix(v: YValue, what: string): Matrix {
  const m = asMap(v, what);
  if (m.tag !== 'opencv-matrix') throw new YamlError(`${what} must be an !!opencv-matrix`);
  const rows = intField(m, 'rows', what);
  const cols = intField(m, 'cols', what);
  const dt = m.entries.get('dt');
  if (typeof dt !== 'string') throw new YamlError(`${what} has no "dt" element type`);
  const data = m.entries.get('data') ?? null;
  if (data !== null && (typeof data !== 'object' || data.kind !== 'seq')) throw new YamlError(`${what}: "data" must be a sequence`);
  // Packed (packed.ts): numbers already.
  if (data?.packed) {
    if (data.packed.length !== rows * cols) throw new YamlError(`${what}: ${rows}x${cols} matrix has ${data.packed.length} values`);
    return { rows, cols, dt, data: data.packed };
  }
  const values: YValue[] = data === null ? [] : data.items;
  if (values.length !== rows * cols) {
    throw new YamlError(`${what}: ${rows}x${cols} matrix has ${values.length} values`);
  }
  const nums = values.map((x, i) => {
    if (typeof x !== 'number') throw new YamlError(`${what}: data[${i}] is not a number`);
    return x;
  });
  return { rows, cols, dt, data: nums };
}

/**
 * Reads a `training.yml` written by OpenCV's `LBPHFaceRecognizer.write()` (or by
 * {@link writeLbphYaml}). Like OpenCV, a missing or zero threshold means DBL_MAX.
 * Throws an Error saying what is wrong for anything that is not an LBPH model.
 */
export function readLbphYaml(text: string): LbphModel {
  const scanner = new PackingScanner();
  scanner.push(text);
  return lbphFromRoot(parsePacked(scanner.end()));
}

/**
 * readLbphYaml for a file read in pieces (bytes as UTF-8, or text), never joined into one string: what a model
 * of thousands of faces needs (about 118 KB of text per face; V8's strings end at ~536 M characters).
 */
export async function readLbphYamlStream(pieces: AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>): Promise<LbphModel> {
  const scanner = new PackingScanner();
  const decoder = new TextDecoder();
  for await (const piece of pieces) scanner.push(typeof piece === 'string' ? piece : decoder.decode(piece, { stream: true }));
  const rest = decoder.decode();
  if (rest) scanner.push(rest);
  return lbphFromRoot(parsePacked(scanner.end()));
}

function lbphFromRoot(root: YValue): LbphModel {
  if (root === null || typeof root !== 'object' || root.kind !== 'map' || root.entries.size === 0) {
    throw new YamlError('the file has no top-level map');
  }
  const node = root.entries.get('opencv_lbphfaces');
  if (node === undefined) {
    const first = [...root.entries.keys()][0];
    throw new YamlError(`not an LBPH model: expected top-level "opencv_lbphfaces", found "${first}"`);
  }
  const m = asMap(node, 'opencv_lbphfaces');
  const thr = m.entries.get('threshold');
  let threshold = LBPH_DEFAULTS.threshold;
  if (thr !== undefined && thr !== null) {
    if (typeof thr !== 'number') throw new YamlError('"threshold" must be a number');
    if (thr !== 0) threshold = thr; // OpenCV: 0 means "absent" and keeps DBL_MAX
  }
  const what = 'opencv_lbphfaces';
  const radius = intField(m, 'radius', what);
  const neighbors = intField(m, 'neighbors', what);
  const gridX = intField(m, 'grid_x', what);
  const gridY = intField(m, 'grid_y', what);
  if (radius < 1 || neighbors < 1 || neighbors > 16 || gridX < 1 || gridY < 1) {
    throw new YamlError(`unsupported parameters radius ${radius}, neighbors ${neighbors}, grid ${gridX}x${gridY}`);
  }
  const size = gridX * gridY * 2 ** neighbors;

  const hNode = m.entries.get('histograms');
  if (hNode === undefined) throw new YamlError('opencv_lbphfaces has no "histograms"');
  let hItems: YValue[] = [];
  if (hNode !== null) {
    if (typeof hNode !== 'object' || hNode.kind !== 'seq') throw new YamlError('"histograms" must be a sequence');
    hItems = seqItems(hNode);
  }
  const histograms = hItems.map((h, i) => {
    const mat = readMatrix(h, `histograms[${i}]`);
    if (mat.dt !== 'f') throw new YamlError(`histograms[${i}] has dt "${mat.dt}"; LBPH histograms are float32 ("f")`);
    if (mat.data.length !== size) {
      throw new YamlError(`histograms[${i}] has ${mat.data.length} values; ${gridX}x${gridY} cells of 2^${neighbors} bins need ${size}`);
    }
    // Rounds each double to float32, as OpenCV's reader does (a packed float32 array is that already).
    return mat.data instanceof Float32Array ? mat.data : Float32Array.from(mat.data);
  });

  const labNode = m.entries.get('labels');
  if (labNode === undefined) throw new YamlError('opencv_lbphfaces has no "labels"');
  const lab = readMatrix(labNode, 'labels');
  if (lab.data.length > 0 && lab.dt !== 'i') throw new YamlError(`labels have dt "${lab.dt}"; expected int32 ("i")`);
  if (lab.data.length !== histograms.length) {
    throw new YamlError(`${histograms.length} histograms but ${lab.data.length} labels`);
  }
  for (let i = 0; i < lab.data.length; i++) {
    if (!Number.isInteger(lab.data[i])) throw new YamlError(`label ${lab.data[i]} is not an integer`);
  }
  const labels = Int32Array.from(lab.data);

  const model: LbphModel = { radius, neighbors, gridX, gridY, threshold, histograms, labels };
  const infoNode = m.entries.get('labelsInfo');
  if (infoNode !== undefined && infoNode !== null && typeof infoNode === 'object' && infoNode.kind === 'seq') {
    const byLabel = new Map<number, string>();
    seqItems(infoNode).forEach((item, i) => {
      const im = asMap(item, `labelsInfo[${i}]`);
      const label = intField(im, 'label', `labelsInfo[${i}]`);
      const value = im.entries.get('value');
      byLabel.set(label, value === undefined || value === null ? '' : String(value));
    });
    const infos: LbphLabelInfo[] = [...byLabel].sort((a, b) => a[0] - b[0]).map(([label, value]) => ({ label, value }));
    model.labelsInfo = infos;
  }
  const alignment = m.entries.get('lookout_face_alignment');
  if (alignment !== undefined && alignment !== null) {
    if (typeof alignment !== 'string') throw new YamlError('"lookout_face_alignment" must be a string');
    model.faceAlignment = alignment;
  }
  return model;
}
