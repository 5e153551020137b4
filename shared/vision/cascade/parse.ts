/**
 * Reading a cascade: OpenCV's cascade XML (the `opencv-cascade-classifier` format of opencv_traincascade and
 * opencv-data) into the flat typed arrays the scans read, with every value OpenCV keeps as float already rounded to
 * float32, and every index and rect checked so a malformed file fails here with a clear HaarCascadeParseError
 * rather than reading out of bounds later. Part of haar-cascade.ts, which re-exports it.
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser';

/** Raised for malformed or unsupported cascade files. */
export class HaarCascadeParseError extends Error {
  constructor(message: string) {
    super(`Haar cascade: ${message}`);
    this.name = 'HaarCascadeParseError';
  }
}

/**
 * A parsed cascade in flat typed arrays (OpenCV's CascadeClassifierImpl::Data + HaarEvaluator features).
 * Values that OpenCV keeps as float are stored already rounded to float32 (in Float64Arrays, for exact comparisons).
 */
export interface HaarCascade {
  /** Detection window, e.g. 20x20 or 24x24. */
  readonly windowWidth: number;
  readonly windowHeight: number;
  readonly stageCount: number;
  readonly treeCount: number;
  readonly featureCount: number;
  /** 1 for stump cascades (default, alt), 2 for alt2. */
  readonly maxNodesPerTree: number;
  readonly hasTiltedFeatures: boolean;
  /** Per stage: float(stageThreshold) - 1e-5f, as OpenCV stores it. */
  readonly stageThreshold: Float64Array;
  /** Trees of stage s are [stageTreeStart[s], stageTreeStart[s + 1]). */
  readonly stageTreeStart: Int32Array;
  /** Nodes of tree t are [treeNodeStart[t], treeNodeStart[t + 1]); its leaves start at treeLeafStart[t]. */
  readonly treeNodeStart: Int32Array;
  readonly treeLeafStart: Int32Array;
  readonly nodeFeature: Int32Array;
  readonly nodeThreshold: Float64Array;
  /** Child links as in the XML: > 0 is a node index within the tree, <= 0 is minus a leaf index. */
  readonly nodeLeft: Int32Array;
  readonly nodeRight: Int32Array;
  readonly leafValues: Float64Array;
  /** Per feature 3 rects of [x, y, width, height] (unused rects are zero with weight 0). */
  readonly featureRects: Int32Array;
  readonly featureWeights: Float64Array;
  readonly featureTilted: Uint8Array;
}

type XmlNode = Record<string, unknown>;

const fround = Math.fround;
const THRESHOLD_EPS = fround(1e-5);

function asObject(v: unknown, what: string): XmlNode {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new HaarCascadeParseError(`${what} is missing or not an element`);
  return v as XmlNode;
}

function asList(v: unknown, what: string): unknown[] {
  if (v === undefined || v === '') throw new HaarCascadeParseError(`${what} is missing or empty`);
  return Array.isArray(v) ? v : [v];
}

function textOf(v: unknown, what: string): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return String(v);
  if (v !== null && typeof v === 'object' && typeof (v as XmlNode)['#text'] === 'string') return (v as XmlNode)['#text'] as string;
  throw new HaarCascadeParseError(`${what} is missing or not text`);
}

function numbers(v: unknown, what: string): number[] {
  const tokens = textOf(v, what)
    .trim()
    .split(/\s+/)
    .filter((t) => t.length > 0);
  return tokens.map((t) => {
    const n = Number(t);
    if (!Number.isFinite(n)) throw new HaarCascadeParseError(`${what}: "${t}" is not a number`);
    return n;
  });
}

function oneNumber(v: unknown, what: string): number {
  const ns = numbers(v, what);
  if (ns.length !== 1) throw new HaarCascadeParseError(`${what}: expected one number, got ${ns.length}`);
  return ns[0];
}

function oneInt(v: unknown, what: string): number {
  const n = oneNumber(v, what);
  if (!Number.isInteger(n)) throw new HaarCascadeParseError(`${what}: expected an integer, got ${n}`);
  return n;
}

/**
 * Parse an OpenCV cascade XML of the current format (`<cascade type_id="opencv-cascade-classifier">`, as written by
 * opencv_traincascade and shipped in opencv-data): BOOST stages, HAAR features (upright and tilted), stumps or trees.
 * Throws HaarCascadeParseError with a clear message otherwise.
 */
export function parseHaarCascade(xml: string): HaarCascade {
  if (typeof xml !== 'string' || xml.trim() === '') throw new HaarCascadeParseError('empty input');
  const valid = XMLValidator.validate(xml);
  if (valid !== true) {
    const { msg, line, col } = valid.err;
    throw new HaarCascadeParseError(`malformed XML at line ${line}, column ${col}: ${msg}`);
  }
  const parser = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '@',
    parseTagValue: false,
    parseAttributeValue: false,
    trimValues: true,
    isArray: (name) => name === '_',
  });
  const doc = asObject(parser.parse(xml), 'document');
  const storage = doc['opencv_storage'];
  if (storage === undefined) throw new HaarCascadeParseError('not an OpenCV FileStorage XML (no <opencv_storage> root)');
  const storageObj = asObject(storage, '<opencv_storage>');
  const topName = Object.keys(storageObj).find((k) => !k.startsWith('@') && k !== '#text');
  if (topName === undefined) throw new HaarCascadeParseError('<opencv_storage> is empty');
  const top = asObject(storageObj[topName], `<${topName}>`);
  const typeId = top['@type_id'];
  if (typeId === 'opencv-haar-classifier') {
    throw new HaarCascadeParseError(
      `<${topName}> is an old-format cascade (type_id="opencv-haar-classifier"), which is not supported; ` +
        'convert it to the new format (e.g. with OpenCV 3.x opencv_haartraining/traincascade) first',
    );
  }
  if (typeId !== undefined && typeId !== 'opencv-cascade-classifier') {
    throw new HaarCascadeParseError(`unsupported type_id "${String(typeId)}" (expected "opencv-cascade-classifier")`);
  }
  const stageType = textOf(top['stageType'], '<stageType>').trim();
  if (stageType !== 'BOOST') throw new HaarCascadeParseError(`unsupported stageType "${stageType}" (only BOOST)`);
  const featureType = textOf(top['featureType'], '<featureType>').trim();
  if (featureType !== 'HAAR') {
    throw new HaarCascadeParseError(`unsupported featureType "${featureType}" (only HAAR; LBP and HOG are not implemented)`);
  }
  const windowWidth = oneInt(top['width'], '<width>');
  const windowHeight = oneInt(top['height'], '<height>');
  if (windowWidth < 3 || windowHeight < 3) throw new HaarCascadeParseError(`window ${windowWidth}x${windowHeight} is too small`);
  const featureParams = asObject(top['featureParams'], '<featureParams>');
  const maxCat = featureParams['maxCatCount'] === undefined ? 0 : oneInt(featureParams['maxCatCount'], '<maxCatCount>');
  if (maxCat !== 0) throw new HaarCascadeParseError(`categorical features (maxCatCount=${maxCat}) are not supported for HAAR`);

  // Features first, so node feature indices can be checked.
  const featuresNode = asObject(top['features'], '<features>');
  const featureList = asList(featuresNode['_'], '<features>');
  const nFeatures = featureList.length;
  const featureRects = new Int32Array(nFeatures * 12);
  const featureWeights = new Float64Array(nFeatures * 3);
  const featureTilted = new Uint8Array(nFeatures);
  let hasTiltedFeatures = false;
  featureList.forEach((f, fi) => {
    const what = `feature ${fi}`;
    const fo = asObject(f, what);
    const rects = asList(asObject(fo['rects'], `${what} <rects>`)['_'], `${what} <rects>`);
    if (rects.length < 1 || rects.length > 3) throw new HaarCascadeParseError(`${what} has ${rects.length} rects (1 to 3 supported)`);
    const tilted = fo['tilted'] === undefined ? 0 : oneInt(fo['tilted'], `${what} <tilted>`);
    featureTilted[fi] = tilted !== 0 ? 1 : 0;
    if (tilted !== 0) hasTiltedFeatures = true;
    rects.forEach((r, ri) => {
      const v = numbers(r, `${what} rect ${ri}`);
      if (v.length !== 5) throw new HaarCascadeParseError(`${what} rect ${ri}: expected "x y width height weight"`);
      const [x, y, w, h, weight] = v;
      if (![x, y, w, h].every(Number.isInteger)) throw new HaarCascadeParseError(`${what} rect ${ri}: non-integer geometry`);
      // Every corner the evaluator reads must lie inside the window's integral image.
      const inside = tilted
        ? x - h >= 0 && x + w <= windowWidth && y >= 0 && y + w + h <= windowHeight && w >= 0 && h >= 0
        : x >= 0 && y >= 0 && w >= 0 && h >= 0 && x + w <= windowWidth && y + h <= windowHeight;
      if (!inside)
        throw new HaarCascadeParseError(`${what} rect ${ri} (${x} ${y} ${w} ${h}) lies outside the ${windowWidth}x${windowHeight} window`);
      featureRects.set([x, y, w, h], fi * 12 + ri * 4);
      featureWeights[fi * 3 + ri] = fround(weight);
    });
  });

  const stagesNode = asObject(top['stages'], '<stages>');
  const stageList = asList(stagesNode['_'], '<stages>');
  const stageThreshold = new Float64Array(stageList.length);
  const stageTreeStart = new Int32Array(stageList.length + 1);
  const treeNodeStart: number[] = [];
  const treeLeafStart: number[] = [];
  const nodeFeature: number[] = [];
  const nodeThreshold: number[] = [];
  const nodeLeft: number[] = [];
  const nodeRight: number[] = [];
  const leafValues: number[] = [];
  let maxNodesPerTree = 0;
  stageList.forEach((s, si) => {
    const so = asObject(s, `stage ${si}`);
    stageThreshold[si] = fround(fround(oneNumber(so['stageThreshold'], `stage ${si} <stageThreshold>`)) - THRESHOLD_EPS);
    const weak = asList(asObject(so['weakClassifiers'], `stage ${si} <weakClassifiers>`)['_'], `stage ${si} <weakClassifiers>`);
    stageTreeStart[si] = treeNodeStart.length;
    weak.forEach((w, wi) => {
      const what = `stage ${si} tree ${wi}`;
      const wo = asObject(w, what);
      const inodes = numbers(wo['internalNodes'], `${what} <internalNodes>`);
      const leaves = numbers(wo['leafValues'], `${what} <leafValues>`);
      if (inodes.length === 0 || inodes.length % 4 !== 0) {
        throw new HaarCascadeParseError(`${what}: <internalNodes> must hold "left right featureIdx threshold" groups`);
      }
      const nodeCount = inodes.length / 4;
      if (leaves.length < nodeCount + 1) throw new HaarCascadeParseError(`${what}: ${nodeCount} nodes need ${nodeCount + 1} leaf values`);
      maxNodesPerTree = Math.max(maxNodesPerTree, nodeCount);
      treeNodeStart.push(nodeFeature.length);
      treeLeafStart.push(leafValues.length);
      for (let k = 0; k < nodeCount; k++) {
        const [left, right, feat, thr] = inodes.slice(k * 4, k * 4 + 4);
        if (!Number.isInteger(left) || !Number.isInteger(right) || !Number.isInteger(feat)) {
          throw new HaarCascadeParseError(`${what} node ${k}: left, right and featureIdx must be integers`);
        }
        if (feat < 0 || feat >= nFeatures)
          throw new HaarCascadeParseError(`${what} node ${k}: feature ${feat} out of range (0..${nFeatures - 1})`);
        for (const child of [left, right]) {
          // Children after their parent guarantee the tree walk ends.
          const ok = child > 0 ? child > k && child < nodeCount : -child < leaves.length;
          if (!ok) throw new HaarCascadeParseError(`${what} node ${k}: child ${child} is not a valid node or leaf`);
        }
        nodeLeft.push(left);
        nodeRight.push(right);
        nodeFeature.push(feat);
        nodeThreshold.push(fround(thr));
      }
      for (const v of leaves) leafValues.push(fround(v));
    });
  });
  stageTreeStart[stageList.length] = treeNodeStart.length;
  treeNodeStart.push(nodeFeature.length);

  return {
    windowWidth,
    windowHeight,
    stageCount: stageList.length,
    treeCount: treeLeafStart.length,
    featureCount: nFeatures,
    maxNodesPerTree,
    hasTiltedFeatures,
    stageThreshold,
    stageTreeStart,
    treeNodeStart: Int32Array.from(treeNodeStart),
    treeLeafStart: Int32Array.from(treeLeafStart),
    nodeFeature: Int32Array.from(nodeFeature),
    nodeThreshold: Float64Array.from(nodeThreshold),
    nodeLeft: Int32Array.from(nodeLeft),
    nodeRight: Int32Array.from(nodeRight),
    leafValues: Float64Array.from(leafValues),
    featureRects,
    featureWeights,
    featureTilted,
  };
}
