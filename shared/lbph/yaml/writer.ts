/**
 * The writer: OpenCV 4.6's YAMLEmitter (modules/core/src/persistence_yml.cpp) reproduced, with its 3-space
 * indents, flow `data: [ ... ]` wrapped past column 71 and strings quoted where OpenCV quotes them, and
 * writeLbphYaml, which emits a model in the structure LBPHFaceRecognizer::write uses, so for the same model the
 * bytes are OpenCV's. lbphYamlChunks gives the same bytes in pieces: a 10,000-face model is about 1.2 GB of text,
 * past V8's longest string (~536 M characters), so a file that size is only ever written piece by piece.
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
/** Output is handed out in pieces of at least this many characters (or a histogram's text, if that is more). */
const CHUNK_CHARS = 1 << 16;

interface Struct {
  indent: number;
  flags: number;
}

class Emitter {
  private out: string[] = ['%YAML:1.0\n---\n'];
  private outChars = 0;
  // The current line as pieces plus its length: cheaper than growing one string per character.
  private parts: string[] = [];
  private len = 0;
  private space = 0;
  private stack: Struct[] = [{ indent: 0, flags: EMPTY }];

  private top(): Struct {
    return this.stack[this.stack.length - 1];
  }

  private emitLine(line: string): void {
    this.out.push(line);
    this.outChars += line.length;
  }

  /** The finished lines once they make a piece worth handing out (else null); they are dropped here. */
  take(force = false): string | null {
    if (this.outChars === 0 || (!force && this.outChars < CHUNK_CHARS)) return null;
    const chunk = this.out.join('');
    this.out = [];
    this.outChars = 0;
    return chunk;
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
    this.flowNumbers(data, dt === 'f' ? formatFloat : String);
    this.endStruct();
    this.endStruct();
  }

  /**
   * scalar(null, format(v)) for each value of an open flow sequence, inlined: the same commas, spaces and line
   * breaks, without a call and an array push per value (a 10,000-face model has 164 M of them).
   */
  private flowNumbers(data: ArrayLike<number>, format: (v: number) => string): void {
    if (data.length === 0) return;
    const cur = this.top();
    const indent = cur.indent;
    const pad = ' '.repeat(indent);
    let line = this.parts.join('');
    let len = this.len;
    let empty = (cur.flags & EMPTY) !== 0;
    let wrapped = false;
    for (let i = 0; i < data.length; i++) {
      const d = format(data[i]);
      if (!empty) {
        line += ',';
        len++;
      }
      empty = false;
      const newOffset = len + d.length;
      if (newOffset > WRAP_MARGIN && newOffset - indent > 10) {
        // flush(): the line has content past its indent here, so it is always written.
        this.emitLine(`${line}\n`);
        line = pad;
        len = indent;
        wrapped = true;
      } else {
        line += ' ';
        len++;
      }
      line += d;
      len += d.length;
    }
    this.parts = [line];
    this.len = len;
    if (wrapped) this.space = indent;
    cur.flags &= ~EMPTY;
  }

  finish(): string {
    this.flush();
    return this.take(true) ?? '';
  }
}

/**
 * formatReal(v, 8) remembered: an LBPH histogram holds counts over a cell's pixel count, so a model of millions of
 * values has only a few thousand distinct ones. Bounded, so an unusual model costs memory no more than this.
 */
const floatCache = new Map<number, string>();
function formatFloat(v: number): string {
  let s = floatCache.get(v);
  if (s === undefined) {
    s = formatReal(v, 8);
    if (floatCache.size >= 1 << 16) floatCache.clear();
    floatCache.set(v, s);
  }
  return s;
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
 * number spellings and line wrapping, so OpenCV reads it back unchanged. For small models only: see lbphYamlChunks.
 */
export function writeLbphYaml(model: LbphModel): string {
  return [...lbphYamlChunks(model)].join('');
}

/**
 * writeLbphYaml's text in pieces of 64 K characters or one histogram's text (about 118 K), whichever is more, made
 * as they are taken, so writing a model never holds more than a piece of its text: the pieces joined are
 * writeLbphYaml's string.
 */
export function* lbphYamlChunks(model: LbphModel): Generator<string, void, undefined> {
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
    const chunk = e.take();
    if (chunk !== null) yield chunk;
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
    const chunk = e.take();
    if (chunk !== null) yield chunk;
  }
  e.endStruct();
  // Lookout's own key (OpenCV's LBPH::read looks up its keys by name and skips any other).
  if (model.faceAlignment) e.string('lookout_face_alignment', model.faceAlignment);
  e.endStruct();
  const last = e.finish();
  if (last) yield last;
}
