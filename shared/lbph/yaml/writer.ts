/**
 * The writer: OpenCV 4.6's YAMLEmitter (modules/core/src/persistence_yml.cpp) reproduced, with its 3-space
 * indents, flow `data: [ ... ]` wrapped past column 71 and strings quoted where OpenCV quotes them, and
 * writeLbphYaml, which emits a model in the structure LBPHFaceRecognizer::write uses, so for the same model the
 * bytes are OpenCV's. lbphYamlBytes gives the same bytes (UTF-8) in pieces of whole lines: a 10,000-face model is
 * about 1.2 GB of text, past V8's longest string (~536 M characters), so a file that size is only ever written
 * piece by piece. The numbers of a matrix go straight into bytes from a cache of each distinct value's spelling
 * (building them as strings and encoding them again was most of a training's time at 3,000 faces).
 * Part of opencv-yaml.ts, which re-exports both.
 */
import type { LbphModel } from '../lbph.js';
import { formatReal } from './numbers.js';
import { isAlnum } from './parser.js';

const MAP = 1;
const SEQ = 2;
const FLOW = 4;
const EMPTY = 8;
const WRAP_MARGIN = 71;
const INDENT = 3;
/** Output is handed out in pieces of whole lines of at most this many bytes (a longer line alone). */
const PIECE_BYTES = 1 << 20;
const COMMA = 0x2c;
const SPACE = 0x20;
const NEWLINE = 0x0a;

const utf8 = new TextEncoder();
const utf8Decoder = new TextDecoder();

/** The emitter's finished lines as bytes, handed out in pieces that end at a line's end. */
class ByteSink {
  private buf = new Uint8Array(PIECE_BYTES);
  private pos = 0;
  private ready: Uint8Array[] = [];

  /** Room for `n` more bytes in the current piece (a new piece when they do not fit). */
  private room(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    this.seal();
    if (n > this.buf.length) this.buf = new Uint8Array(n);
  }

  private seal(): void {
    if (this.pos === 0) return;
    this.ready.push(this.buf.subarray(0, this.pos));
    this.buf = new Uint8Array(PIECE_BYTES);
    this.pos = 0;
  }

  text(s: string): void {
    this.room(s.length * 3);
    this.pos += utf8.encodeInto(s, this.buf.subarray(this.pos)).written;
  }

  bytes(b: Uint8Array, n: number): void {
    this.room(n);
    this.buf.set(b.subarray(0, n), this.pos);
    this.pos += n;
  }

  /** The full pieces so far (every piece with `force`); they are dropped here. */
  take(force = false): Uint8Array[] {
    if (force) this.seal();
    const out = this.ready;
    this.ready = [];
    return out;
  }
}

interface Struct {
  indent: number;
  flags: number;
}

class Emitter {
  private readonly out = new ByteSink();
  // The current line as pieces plus its length: cheaper than growing one string per character.
  private parts: string[] = [];
  private len = 0;
  private space = 0;
  private stack: Struct[] = [{ indent: 0, flags: EMPTY }];

  private top(): Struct {
    return this.stack[this.stack.length - 1];
  }

  constructor() {
    this.out.text('%YAML:1.0\n---\n');
  }

  private emitLine(line: string): void {
    this.out.text(line);
  }

  /** The finished pieces so far; they are dropped here. */
  take(force = false): Uint8Array[] {
    return this.out.take(force);
  }

  private append(s: string): void {
    this.parts.push(s);
    this.len += s.length;
  }

  private flush(): void {
    if (this.len > this.space) this.emitLine(`${this.parts.join('')}\n`);
    const indent = this.top().indent;
    this.parts = [' '.repeat(indent)];
    this.len = indent;
    this.space = indent;
  }

  scalar(key: string | null, data: string | null): void {
    const cur = this.top();
    let flags = cur.flags;
    if (!(flags & (MAP | SEQ))) flags = EMPTY | (key ? MAP : SEQ);
    if (flags & FLOW) {
      if (!(flags & EMPTY)) this.append(',');
      const newOffset = this.len + (key ? key.length : 0) + (data ? data.length : 0);
      if (newOffset > WRAP_MARGIN && newOffset - cur.indent > 10) this.flush();
      else this.append(' ');
    } else {
      this.flush();
      if (!(flags & MAP)) this.append(data ? '- ' : '-');
    }
    if (key) this.append(!(flags & FLOW) && data ? `${key}: ` : `${key}:`);
    if (data) this.append(data);
    cur.flags &= ~EMPTY;
  }

  startStruct(key: string | null, flags: number, typeName?: string): void {
    const parent = this.top();
    flags |= EMPTY;
    let data: string | null = null;
    if (flags & FLOW) data = `${typeName ? `!!${typeName} ` : ''}${flags & MAP ? '{' : '['}`;
    else if (typeName) data = `!!${typeName}`;
    this.scalar(key, data);
    const indent = parent.indent + (parent.flags & FLOW ? 0 : INDENT + (flags & FLOW ? 1 : 0));
    this.stack.push({ indent, flags });
    if (!(flags & FLOW)) this.flush();
  }

  endStruct(): void {
    const cur = this.top();
    if (cur.flags & FLOW) {
      if (this.len > cur.indent && !(cur.flags & EMPTY)) this.append(' ');
      this.append(cur.flags & MAP ? '}' : ']');
    } else if (cur.flags & EMPTY) {
      this.flush();
      this.append(cur.flags & MAP ? '{}' : '[]');
    }
    this.stack.pop();
    this.top().flags &= ~EMPTY;
  }

  int(key: string | null, v: number): void {
    this.scalar(key, String(v));
  }

  real(key: string | null, v: number): void {
    this.scalar(key, formatReal(v, 16));
  }

  string(key: string | null, str: string): void {
    this.scalar(key, quoteString(str));
  }

  /** cv::write(fs, name, Mat) for a 2-D single-channel matrix. */
  matrix(key: string | null, rows: number, cols: number, dt: 'f' | 'i' | 'u', data: ArrayLike<number>): void {
    this.startStruct(key, MAP, 'opencv-matrix');
    this.int('rows', rows);
    this.int('cols', cols);
    this.string('dt', dt);
    this.startStruct('data', SEQ | FLOW);
    this.flowNumbers(data, dt === 'f' ? floatBytes : intBytes);
    this.endStruct();
    this.endStruct();
  }

  /**
   * scalar(null, format(v)) for each value of an open flow sequence, inlined and in bytes: the same commas, spaces
   * and line breaks, without a call, a string and an array push per value (a 10,000-face model has 164 M of them).
   * The line being built is kept in `line` (bytes); `len` counts its characters as scalar() does.
   */
  private flowNumbers(data: ArrayLike<number>, format: (v: number) => Uint8Array): void {
    if (data.length === 0) return;
    const cur = this.top();
    const indent = cur.indent;
    let line: Uint8Array = utf8.encode(this.parts.join(''));
    let l = line.length;
    line = grown(line, l + 64);
    let len = this.len;
    let empty = (cur.flags & EMPTY) !== 0;
    let wrapped = false;
    for (let i = 0; i < data.length; i++) {
      const d = format(data[i]);
      const n = d.length;
      if (l + n + 2 > line.length) line = grown(line, l + n + 64);
      if (!empty) {
        line[l++] = COMMA;
        len++;
      }
      empty = false;
      const newOffset = len + n;
      if (newOffset > WRAP_MARGIN && newOffset - indent > 10) {
        // flush(): the line has content past its indent here, so it is always written.
        line[l++] = NEWLINE;
        this.out.bytes(line, l);
        if (line.length < indent + n + 2) line = new Uint8Array(indent + n + 64);
        line.fill(SPACE, 0, indent);
        l = indent;
        len = indent;
        wrapped = true;
      } else {
        line[l++] = SPACE;
        len++;
      }
      for (let k = 0; k < n; k++) line[l++] = d[k];
      len += n;
    }
    this.parts = [utf8Decoder.decode(line.subarray(0, l))];
    this.len = len;
    if (wrapped) this.space = indent;
    cur.flags &= ~EMPTY;
  }

  finish(): Uint8Array[] {
    this.flush();
    return this.take(true);
  }
}

/** `bytes` in a buffer of at least `size` bytes (itself when it is that long). */
function grown(bytes: Uint8Array, size: number): Uint8Array {
  if (bytes.length >= size) return bytes;
  const out = new Uint8Array(Math.max(size, bytes.length * 2));
  out.set(bytes);
  return out;
}

/**
 * formatReal(v, 8) as bytes, remembered: an LBPH histogram holds counts over a cell's pixel count, so a model of
 * millions of values has only a few thousand distinct ones (and mostly zeros). Bounded, so an unusual model costs
 * memory no more than this.
 */
const ZERO = utf8.encode(formatReal(0, 8));
const floatCache = new Map<number, Uint8Array>();
function floatBytes(v: number): Uint8Array {
  if (v === 0 && !Object.is(v, -0)) return ZERO;
  let s = floatCache.get(v);
  if (s === undefined) {
    s = utf8.encode(formatReal(v, 8));
    if (floatCache.size >= 1 << 16) floatCache.clear();
    floatCache.set(v, s);
  }
  return s;
}

function intBytes(v: number): Uint8Array {
  return utf8.encode(String(v));
}

/**
 * YAMLEmitter::write(key, str, quote=false): plain when safe, else double-quoted with \-escapes.
 * One deliberate difference: OpenCV writes a string that starts and ends with the same quote
 * character unchanged (so it reads back without its quotes); Lookout quotes it like any other.
 */
function quoteString(str: string): string {
  let needQuote = str.length === 0 || str[0] === ' ';
  let body = '';
  for (const ch of str) {
    const code = ch.codePointAt(0) as number;
    if (!needQuote && !isAlnum(ch) && !'_ -()/+;'.includes(ch)) needQuote = true;
    if (code < 0x20) {
      body += ch === '\n' ? '\\n' : ch === '\r' ? '\\r' : ch === '\t' ? '\\t' : `\\x${code.toString(16).padStart(2, '0')}`;
    } else if (ch === '\\' || ch === "'" || ch === '"') body += `\\${ch}`;
    else body += ch;
  }
  if (!needQuote && /^[0-9+\-.]/.test(str)) needQuote = true;
  if (str.length > 4096) throw new Error('OpenCV YAML: strings are limited to 4096 characters (CV_FS_MAX_LEN)');
  return needQuote ? `"${body}"` : body;
}

/**
 * The model as OpenCV 4.6 writes it with `recognizer.write("training.yml")`: same structure,
 * number spellings and line wrapping, so OpenCV reads it back unchanged. For small models only: see lbphYamlBytes.
 */
export function writeLbphYaml(model: LbphModel): string {
  return [...lbphYamlChunks(model)].join('');
}

/** writeLbphYaml's text in pieces (each a whole number of lines, about 1 MB): see lbphYamlBytes. */
export function* lbphYamlChunks(model: LbphModel): Generator<string, void, undefined> {
  for (const piece of lbphYamlBytes(model)) yield utf8Decoder.decode(piece);
}

/**
 * writeLbphYaml's text as UTF-8, in pieces of whole lines of about 1 MB (a piece is the caller's to keep), made as
 * they are taken, so writing a model never holds more than a piece of its text: the pieces joined are
 * writeLbphYaml's string, encoded.
 */
export function* lbphYamlBytes(model: LbphModel): Generator<Uint8Array, void, undefined> {
  const n = model.histograms.length;
  if (model.labels.length !== n) throw new Error(`LBPH YAML: ${n} histograms but ${model.labels.length} labels`);
  const e = new Emitter();
  e.startStruct('opencv_lbphfaces', MAP);
  e.real('threshold', model.threshold);
  e.int('radius', model.radius);
  e.int('neighbors', model.neighbors);
  e.int('grid_x', model.gridX);
  e.int('grid_y', model.gridY);
  e.startStruct('histograms', SEQ);
  for (const h of model.histograms) {
    e.matrix(null, 1, h.length, 'f', h);
    yield* e.take();
  }
  e.endStruct();
  // OpenCV keeps labels as an N x 1 CV_32S column; an untrained model has an empty CV_8U Mat.
  if (n > 0) e.matrix('labels', n, 1, 'i', model.labels);
  else e.matrix('labels', 0, 0, 'u', []);
  e.startStruct('labelsInfo', SEQ);
  const infos = [...(model.labelsInfo ?? [])].sort((a, b) => a.label - b.label); // a std::map<int, String>
  for (const info of infos) {
    e.startStruct(null, MAP);
    e.int('label', info.label);
    e.string('value', info.value);
    e.endStruct();
    yield* e.take();
  }
  e.endStruct();
  // Lookout's own key (OpenCV's LBPH::read looks up its keys by name and skips any other).
  if (model.faceAlignment) e.string('lookout_face_alignment', model.faceAlignment);
  e.endStruct();
  yield* e.finish();
}
