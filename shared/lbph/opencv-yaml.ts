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
 * Runs unchanged in Node and browsers (strings in, strings out).
 */
import { LBPH_DEFAULTS, type LbphLabelInfo, type LbphModel } from './lbph.js';

// ---------------------------------------------------------------- number formatting (printf %.Ne)

const POW10 = (n: number): bigint => 10n ** BigInt(n);

/** The exact value of a finite double as num / den (den a power of two). */
function exactRational(v: number): [bigint, bigint] {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, Math.abs(v));
  const hi = view.getUint32(0);
  const lo = view.getUint32(4);
  const biased = hi >>> 20;
  let mant = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  let exp: number;
  if (biased === 0) exp = -1074;
  else {
    mant |= 1n << 52n;
    exp = biased - 1075;
  }
  return exp >= 0 ? [mant << BigInt(exp), 1n] : [mant, 1n << BigInt(-exp)];
}

/**
 * printf("%.{prec}e", v) as glibc does it: correctly rounded, ties to even on the exact binary
 * value. JavaScript's toExponential breaks exact ties upwards, so those (rare) cases are redone.
 */
const f64 = new Float64Array(1);
const u32 = new Uint32Array(f64.buffer);
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * Whether the exact value of a (finite, > 0) could have exactly `digits` significant decimal
 * digits, the only way a printf rounding tie can happen. a = m * 2^-k with m odd has exactly k
 * fractional decimal digits, so its significant digits are k + floor(log10 a) + 1 (checked with
 * a margin of one for the log). Integers (k <= 0) are left to the exact test.
 */
function mayTie(a: number, digits: number): boolean {
  f64[0] = a;
  const hi = u32[LITTLE_ENDIAN ? 1 : 0];
  const lo = u32[LITTLE_ENDIAN ? 0 : 1];
  const biased = (hi >>> 20) & 0x7ff;
  let exp = biased === 0 ? -1074 : biased - 1075; // a = mant * 2^exp
  let tz: number;
  if (lo !== 0) tz = 31 - Math.clz32(lo & -lo);
  else {
    const mh = (hi & 0xfffff) | (biased === 0 ? 0 : 0x100000);
    tz = 32 + 31 - Math.clz32(mh & -mh);
  }
  exp += tz;
  if (exp >= 0) return true;
  const sig = -exp + Math.floor(Math.log10(a)) + 1;
  return Math.abs(sig - digits) <= 1;
}

function printfExp(v: number, prec: number): string {
  const neg = v < 0 || Object.is(v, -0);
  const a = Math.abs(v);
  let s = a.toExponential(prec);
  const m = a > 0 && mayTie(a, prec + 2) ? /^(\d)\.(\d+)e([+-]\d+)$/.exec(a.toExponential(prec + 1)) : null;
  if (m && m[2].endsWith('5')) {
    const digits = m[1] + m[2]; // prec + 2 significant digits
    const e10 = Number(m[3]) - (prec + 1);
    const [num, den] = exactRational(a);
    const dNum = BigInt(digits) * (e10 >= 0 ? POW10(e10) : 1n);
    const dDen = e10 < 0 ? POW10(-e10) : 1n;
    if (dNum * den === num * dDen) {
      // An exact tie: keep the even neighbour.
      let kept = BigInt(digits.slice(0, -1));
      if (kept % 2n === 1n) kept += 1n;
      let ks = kept.toString();
      let exp = Number(m[3]);
      if (ks.length > prec + 1) {
        ks = ks.slice(0, prec + 1);
        exp += 1;
      }
      s = `${ks[0]}${prec > 0 ? '.' + ks.slice(1) : ''}e${exp < 0 ? '-' : '+'}${Math.abs(exp)}`;
    }
  }
  // C prints at least two exponent digits.
  if (s.length - s.indexOf('e') === 3) s = s.slice(0, -1) + '0' + s.slice(-1);
  return neg ? '-' + s : s;
}

/** OpenCV's fs::floatToString / doubleToString (non-JSON): "N." for int32-valued, else %.8e / %.16e. */
function formatReal(v: number, prec: 8 | 16): string {
  if (Number.isNaN(v)) return '.Nan';
  if (v === Infinity) return '.Inf';
  if (v === -Infinity) return '-.Inf';
  // cvRound(v) == v holds only for integers representable as int32 (cvRound saturates to INT_MIN).
  if (Number.isInteger(v) && v >= -2147483648 && v <= 2147483647) return `${v === 0 ? 0 : v}.`;
  return printfExp(v, prec);
}

// ---------------------------------------------------------------- emitter (OpenCV's YAMLEmitter)

const MAP = 1;
const SEQ = 2;
const FLOW = 4;
const EMPTY = 8;
const WRAP_MARGIN = 71;
const INDENT = 3;

interface Struct {
  indent: number;
  flags: number;
}

class Emitter {
  private out: string[] = ['%YAML:1.0\n---\n'];
  // The current line as pieces plus its length: cheaper than growing one string per character.
  private parts: string[] = [];
  private len = 0;
  private space = 0;
  private stack: Struct[] = [{ indent: 0, flags: EMPTY }];

  private top(): Struct {
    return this.stack[this.stack.length - 1];
  }

  private append(s: string): void {
    this.parts.push(s);
    this.len += s.length;
  }

  private flush(): void {
    if (this.len > this.space) this.out.push(this.parts.join('') + '\n');
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
    if (key) this.append(!(flags & FLOW) && data ? key + ': ' : key + ':');
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
    for (let i = 0; i < data.length; i++) this.scalar(null, dt === 'f' ? formatReal(data[i], 8) : String(data[i]));
    this.endStruct();
    this.endStruct();
  }

  finish(): string {
    this.flush();
    return this.out.join('');
  }
}

const isAlnum = (c: string) => /^[A-Za-z0-9]$/.test(c);

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
    } else if (ch === '\\' || ch === "'" || ch === '"') body += '\\' + ch;
    else body += ch;
  }
  if (!needQuote && /^[0-9+\-.]/.test(str)) needQuote = true;
  if (str.length > 4096) throw new Error('OpenCV YAML: strings are limited to 4096 characters (CV_FS_MAX_LEN)');
  return needQuote ? `"${body}"` : body;
}

/**
 * The model as OpenCV 4.6 writes it with `recognizer.write("training.yml")`: same structure,
 * number spellings and line wrapping, so OpenCV reads it back unchanged.
 */
export function writeLbphYaml(model: LbphModel): string {
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
  for (const h of model.histograms) e.matrix(null, 1, h.length, 'f', h);
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
  }
  e.endStruct();
  e.endStruct();
  return e.finish();
}

// ---------------------------------------------------------------- parser (FileStorage YAML subset)

type YValue = number | string | YMap | YSeq | null;
interface YMap {
  kind: 'map';
  tag?: string;
  entries: Map<string, YValue>;
}
interface YSeq {
  kind: 'seq';
  tag?: string;
  items: YValue[];
}

class YamlError extends Error {
  constructor(message: string, line?: number) {
    super(`OpenCV YAML: ${message}${line !== undefined ? ` (line ${line})` : ''}`);
  }
}

const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';

/** A plain scalar as FileStorage types it: numbers by their first characters, else a string. */
function plainScalar(s: string, line: () => number): number | string {
  const v = plainScalarOrInvalid(s);
  if (v === undefined) throw new YamlError(`invalid number "${s}"`, line());
  return v;
}

/** {@link plainScalar} without the error: undefined for a malformed number. */
function plainScalarOrInvalid(s: string): number | string | undefined {
  const c = s[0];
  const d = s[1];
  const looksNumeric =
    isDigit(c) || ((c === '-' || c === '+') && (isDigit(d) || d === '.')) || (c === '.' && d !== undefined && isAlnum(d));
  if (!looksNumeric) return s;
  let k = c === '-' || c === '+' ? 1 : 0;
  while (isDigit(s[k])) k++;
  if (s[k] === '.' || s[k] === 'e' || s[k] === 'E') {
    const v = Number(s);
    if (!Number.isNaN(v)) return v;
    const special = /^([-+]?)\.(inf|nan)$/i.exec(s);
    if (special) return special[2].toLowerCase() === 'nan' ? NaN : special[1] === '-' ? -Infinity : Infinity;
    return undefined;
  }
  // strtol with base 0, as OpenCV reads ints: 0x.. hex, 0.. octal.
  const m = /^([-+]?)(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)$/.exec(s);
  if (!m) return undefined;
  const body = m[2];
  const mag = /^0[xX]/.test(body) ? parseInt(body.slice(2), 16) : body.length > 1 && body[0] === '0' ? parseInt(body, 8) : Number(body);
  return m[1] === '-' ? -mag : mag;
}

class Parser {
  private pos = 0;
  constructor(private readonly text: string) {}

  private line(at = this.pos): number {
    let n = 1;
    for (let i = 0; i < at && i < this.text.length; i++) if (this.text.charCodeAt(i) === 10) n++;
    return n;
  }

  private fail(msg: string): never {
    throw new YamlError(msg, this.line());
  }

  private column(at = this.pos): number {
    return at - (this.text.lastIndexOf('\n', at - 1) + 1);
  }

  private atEol(): boolean {
    const c = this.text[this.pos];
    return c === undefined || c === '\n' || c === '\r' || (c === '#' && this.precededBySpace());
  }

  private precededBySpace(): boolean {
    const p = this.text[this.pos - 1];
    return p === undefined || p === ' ' || p === '\n' || p === '\t';
  }

  private skipSpaces(): void {
    while (this.text[this.pos] === ' ') this.pos++;
    if (this.text[this.pos] === '\t') this.fail('tabs are not allowed in YAML');
  }

  /** Skips spaces, comments and line ends; returns false at the end of the document. */
  private skipBlank(): boolean {
    for (;;) {
      this.skipSpaces();
      const c = this.text[this.pos];
      if (c === undefined) return false;
      if (c === '#' && this.precededBySpace()) {
        const nl = this.text.indexOf('\n', this.pos);
        this.pos = nl < 0 ? this.text.length : nl;
      } else if (c === '\n' || c === '\r') this.pos++;
      else if (this.column() === 0 && (this.text.startsWith('...', this.pos) || this.text.startsWith('---', this.pos))) {
        return false; // end of the first document
      } else return true;
    }
  }

  parseDocument(): YValue {
    // Directives (%YAML:1.0) and the document start marker.
    for (;;) {
      this.skipSpaces();
      if (this.text[this.pos] === '%') {
        const nl = this.text.indexOf('\n', this.pos);
        this.pos = nl < 0 ? this.text.length : nl + 1;
      } else if (this.text[this.pos] === '#' || this.text[this.pos] === '\n' || this.text[this.pos] === '\r') {
        const nl = this.text.indexOf('\n', this.pos);
        this.pos = nl < 0 ? this.text.length : nl + 1;
      } else break;
    }
    if (this.text.startsWith('---', this.pos)) this.pos += 3;
    const v = this.parseNode(0);
    if (this.skipBlank()) this.fail('unexpected content after the top-level node');
    return v;
  }

  /** A node starting at the next content at column >= minIndent; null when there is none. */
  private parseNode(minIndent: number): YValue {
    if (!this.skipBlank() || this.column() < minIndent) return null;
    let tag: string | undefined;
    if (this.text[this.pos] === '!') {
      tag = this.readTag();
      this.skipSpaces();
      if (this.atEol()) {
        const v = this.parseNode(minIndent);
        return this.applyTag(v, tag);
      }
    }
    const col = this.column();
    const c = this.text[this.pos];
    let v: YValue;
    if (c === '-' && /[ \n\r]|$/.test(this.text[this.pos + 1] ?? '')) v = this.parseBlockSeq(col);
    else if (c === '[' || c === '{') {
      v = this.parseFlow();
      this.skipSpaces();
      if (!this.atEol()) this.fail('unexpected text after a flow collection');
    } else if (this.isKeyHere()) v = this.parseBlockMap(col);
    else v = this.parseBlockScalar();
    return this.applyTag(v, tag);
  }

  private applyTag(v: YValue, tag: string | undefined): YValue {
    if (tag === undefined) return v;
    if (tag === 'binary') this.fail('!!binary (base64) data is not supported');
    if (v !== null && typeof v === 'object') v.tag = tag;
    return v;
  }

  private readTag(): string {
    const m = /!!?([^\s]+)/y;
    m.lastIndex = this.pos;
    const r = m.exec(this.text);
    if (!r) this.fail('empty type tag');
    this.pos = m.lastIndex;
    return r[1];
  }

  private isKeyHere(): boolean {
    const c = this.text[this.pos];
    if (c === '"' || c === "'" || c === '[' || c === '{' || c === '-' || c === '#') return false;
    const re = /[^:\n\r#]*?:(?=[ \n\r]|$)/y;
    re.lastIndex = this.pos;
    return re.test(this.text);
  }

  private parseBlockMap(col: number): YMap {
    const map: YMap = { kind: 'map', entries: new Map() };
    for (;;) {
      const keyPos = this.pos;
      const re = /([^:\n\r#]*?)[ ]*:(?=[ \n\r]|$)/y;
      re.lastIndex = this.pos;
      const m = re.exec(this.text);
      if (!m || m[1].length === 0) this.fail('expected "key: value"');
      const key = m[1];
      if (map.entries.has(key)) throw new YamlError(`duplicated key "${key}"`, this.line(keyPos));
      this.pos = re.lastIndex;
      this.skipSpaces();
      let value: YValue;
      if (!this.atEol()) value = this.parseInlineValue(col + 1);
      else if (this.skipBlank() && this.column() === col && this.text[this.pos] === '-') value = this.parseBlockSeq(col);
      else value = this.parseNode(col + 1);
      map.entries.set(key, value);
      if (!this.skipBlank()) break;
      const next = this.column();
      if (next < col) break;
      if (next > col) this.fail('bad indentation');
      if (!this.isKeyHere()) {
        if (this.text[this.pos] === '-') break; // a sequence item of an enclosing sequence
        this.fail('expected "key: value"');
      }
    }
    return map;
  }

  private parseBlockSeq(col: number): YSeq {
    const seq: YSeq = { kind: 'seq', items: [] };
    for (;;) {
      this.pos++; // '-'
      this.skipSpaces();
      seq.items.push(this.parseNode(col + 1));
      if (!this.skipBlank()) break;
      const next = this.column();
      if (next < col) break;
      if (next > col || this.text[this.pos] !== '-') {
        if (next === col && this.isKeyHere()) break; // "key:\n- a\nnext: b" (sequence at the map's indent)
        this.fail('bad indentation in a sequence');
      }
    }
    return seq;
  }

  /** The value after "key: " on the same line: a tag, a flow collection or a scalar. */
  private parseInlineValue(minIndent: number): YValue {
    const c = this.text[this.pos];
    if (c === '!') {
      const tag = this.readTag();
      this.skipSpaces();
      const v = this.atEol() ? this.parseNode(minIndent) : this.parseInlineValue(minIndent);
      return this.applyTag(v, tag);
    }
    if (c === '[' || c === '{') {
      const v = this.parseFlow();
      this.skipSpaces();
      if (!this.atEol()) this.fail('unexpected text after a flow collection');
      return v;
    }
    return this.parseBlockScalar();
  }

  private parseBlockScalar(): number | string {
    const c = this.text[this.pos];
    if (c === '"' || c === "'") {
      const s = this.parseQuoted();
      this.skipSpaces();
      if (!this.atEol()) this.fail('unexpected text after a quoted string');
      return s;
    }
    const start = this.pos;
    while (!this.atEol()) this.pos++;
    const raw = this.text.slice(start, this.pos).trimEnd();
    return plainScalar(raw, () => this.line(start));
  }

  private parseQuoted(): string {
    const q = this.text[this.pos++];
    let out = '';
    for (;;) {
      const c = this.text[this.pos++];
      if (c === undefined || c === '\n' || c === '\r') this.fail('unterminated quoted string');
      if (c === q) {
        if (q === "'" && this.text[this.pos] === "'") {
          out += "'";
          this.pos++;
          continue;
        }
        return out;
      }
      if (q === '"' && c === '\\') {
        const d = this.text[this.pos++];
        if (d === 'n') out += '\n';
        else if (d === 'r') out += '\r';
        else if (d === 't') out += '\t';
        else if (d === '"' || d === "'" || d === '\\') out += d;
        else if (d === 'x' && /^[0-9a-fA-F]{2}$/.test(this.text.substr(this.pos, 2))) {
          out += String.fromCharCode(parseInt(this.text.substr(this.pos, 2), 16));
          this.pos += 2;
        } else out += '\\' + (d ?? '');
      } else out += c;
    }
  }

  /** Skips spaces, line ends and comments inside a flow collection. */
  private skipFlowBlank(): void {
    for (;;) {
      const c = this.text[this.pos];
      if (c === ' ' || c === '\n' || c === '\r') this.pos++;
      else if (c === '\t') this.fail('tabs are not allowed in YAML');
      else if (c === '#' && this.precededBySpace()) {
        const nl = this.text.indexOf('\n', this.pos);
        this.pos = nl < 0 ? this.text.length : nl;
      } else return;
    }
  }

  private parseFlow(): YMap | YSeq {
    const open = this.text[this.pos++];
    const close = open === '[' ? ']' : '}';
    const seq: YSeq = { kind: 'seq', items: [] };
    const map: YMap = { kind: 'map', entries: new Map() };
    for (let first = true; ; first = false) {
      this.skipFlowBlank();
      if (this.text[this.pos] === close) {
        this.pos++;
        return open === '[' ? seq : map;
      }
      if (!first) {
        if (this.text[this.pos] !== ',') this.fail(`expected "," or "${close}" in a flow collection`);
        this.pos++;
        this.skipFlowBlank();
      }
      if (this.pos >= this.text.length) this.fail(`unterminated flow collection (missing "${close}")`);
      let key: string | undefined;
      if (open === '{') {
        const re = /([^:,}\n\r]+?)[ ]*:/y;
        re.lastIndex = this.pos;
        const m = re.exec(this.text);
        if (!m) this.fail('expected "key: value" in a flow map');
        key = m[1];
        this.pos = re.lastIndex;
        this.skipFlowBlank();
      }
      let tag: string | undefined;
      if (this.text[this.pos] === '!') {
        tag = this.readTag();
        this.skipFlowBlank();
      }
      let v: YValue;
      const c = this.text[this.pos];
      if (c === '[' || c === '{') v = this.parseFlow();
      else if (c === '"' || c === "'") v = this.parseQuoted();
      else {
        const text = this.text;
        let end = this.pos;
        for (;;) {
          const ch = text.charCodeAt(end);
          // , ] } \n \r or the end of the text
          if (ch === 44 || ch === 93 || ch === 125 || ch === 10 || ch === 13 || Number.isNaN(ch)) break;
          end++;
        }
        let raw = text.slice(this.pos, end);
        if (raw.includes('#')) raw = raw.replace(/\s+#.*$/, '');
        raw = raw.trim();
        if (raw.length === 0) this.fail('empty item in a flow collection');
        const parsed = plainScalarOrInvalid(raw);
        if (parsed === undefined) this.fail(`invalid number "${raw}"`);
        v = parsed;
        this.pos = end;
      }
      v = this.applyTag(v, tag);
      if (key !== undefined) map.entries.set(key, v);
      else seq.items.push(v);
    }
  }
}

/** Parses a FileStorage YAML document into plain nodes. Exported for tests and tools. */
export function parseOpenCvYaml(text: string): YValue {
  if (typeof text !== 'string') throw new YamlError('expected the file as a string');
  const head = text.replace(/^\uFEFF/, '').trimStart();
  if (head.startsWith('<')) throw new YamlError('this is XML; only the YAML FileStorage format is supported');
  if (head.startsWith('{')) throw new YamlError('this looks like JSON; only the YAML FileStorage format is supported');
  if (!/^%YAML[: ]1\.[0-9]/.test(head)) throw new YamlError('missing the "%YAML:1.0" header of an OpenCV FileStorage file');
  return new Parser(head).parseDocument();
}

// ---------------------------------------------------------------- YAML nodes -> model

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
  data: number[];
}

function readMatrix(v: YValue, what: string): Matrix {
  const m = asMap(v, what);
  if (m.tag !== 'opencv-matrix') throw new YamlError(`${what} must be an !!opencv-matrix`);
  const rows = intField(m, 'rows', what);
  const cols = intField(m, 'cols', what);
  const dt = m.entries.get('dt');
  if (typeof dt !== 'string') throw new YamlError(`${what} has no "dt" element type`);
  const data = m.entries.get('data') ?? null;
  let values: YValue[];
  if (data === null) values = [];
  else if (typeof data === 'object' && data.kind === 'seq') values = data.items;
  else throw new YamlError(`${what}: "data" must be a sequence`);
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
  const root = parseOpenCvYaml(text);
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
    hItems = hNode.items;
  }
  const histograms = hItems.map((h, i) => {
    const mat = readMatrix(h, `histograms[${i}]`);
    if (mat.dt !== 'f') throw new YamlError(`histograms[${i}] has dt "${mat.dt}"; LBPH histograms are float32 ("f")`);
    if (mat.data.length !== size) {
      throw new YamlError(`histograms[${i}] has ${mat.data.length} values; ${gridX}x${gridY} cells of 2^${neighbors} bins need ${size}`);
    }
    return Float32Array.from(mat.data); // rounds each double to float32, as OpenCV's reader does
  });

  const labNode = m.entries.get('labels');
  if (labNode === undefined) throw new YamlError('opencv_lbphfaces has no "labels"');
  const lab = readMatrix(labNode, 'labels');
  if (lab.data.length > 0 && lab.dt !== 'i') throw new YamlError(`labels have dt "${lab.dt}"; expected int32 ("i")`);
  if (lab.data.length !== histograms.length) {
    throw new YamlError(`${histograms.length} histograms but ${lab.data.length} labels`);
  }
  for (const l of lab.data) if (!Number.isInteger(l)) throw new YamlError(`label ${l} is not an integer`);
  const labels = Int32Array.from(lab.data);

  const model: LbphModel = { radius, neighbors, gridX, gridY, threshold, histograms, labels };
  const infoNode = m.entries.get('labelsInfo');
  if (infoNode !== undefined && infoNode !== null && typeof infoNode === 'object' && infoNode.kind === 'seq') {
    const byLabel = new Map<number, string>();
    infoNode.items.forEach((item, i) => {
      const im = asMap(item, `labelsInfo[${i}]`);
      const label = intField(im, 'label', `labelsInfo[${i}]`);
      const value = im.entries.get('value');
      byLabel.set(label, value === undefined || value === null ? '' : String(value));
    });
    const infos: LbphLabelInfo[] = [...byLabel].sort((a, b) => a[0] - b[0]).map(([label, value]) => ({ label, value }));
    model.labelsInfo = infos;
  }
  return model;
}
