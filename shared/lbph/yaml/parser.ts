/**
 * The reader: the YAML subset FileStorage reads and writes (block and flow collections, `!!` tags, quoted and
 * plain scalars, comments, OpenCV's wrapped data arrays) into plain nodes, with plain scalars typed as
 * FileStorage types them (a number by its first characters; integers as strtol with base 0 reads them, so 0x1f
 * is hex and 017 octal). Errors name the line. Part of opencv-yaml.ts, which re-exports parseOpenCvYaml.
 */

import type { PackedText } from './packed.js';

/** Marks a packed sequence in a skeleton (packed.ts): `[` PLACEHOLDER index `]`. No YAML file holds a NUL. */
export const PLACEHOLDER = '\u0000';

export type YValue = number | string | YMap | YSeq | null;
export interface YMap {
  kind: 'map';
  tag?: string;
  entries: Map<string, YValue>;
}
export interface YSeq {
  kind: 'seq';
  tag?: string;
  /** Empty when the numbers are `packed` (a long flow sequence read by packed.ts): use seqItems for either. */
  items: YValue[];
  packed?: Float32Array | Float64Array;
}

/** A sequence's items, packed or not (a packed one as plain numbers: meant for short ones). */
export function seqItems(seq: YSeq): YValue[] {
  return seq.packed ? Array.from(seq.packed) : seq.items;
}

export class YamlError extends Error {
  constructor(message: string, line?: number) {
    super(`OpenCV YAML: ${message}${line !== undefined ? ` (line ${line})` : ''}`);
  }
}

const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';
export const isAlnum = (c: string) => /^[A-Za-z0-9]$/.test(c);

/** A plain scalar as FileStorage types it: numbers by their first characters, else a string. */
function plainScalar(s: string, line: () => number): number | string {
  const v = plainScalarOrInvalid(s);
  if (v === undefined) throw new YamlError(`invalid number "${s}"`, line());
  return v;
}

/** {@link plainScalar} without the error: undefined for a malformed number. */
export function plainScalarOrInvalid(s: string): number | string | undefined {
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
  constructor(
    private readonly text: string,
    /** Packed sequences (packed.ts) the text has placeholders for, with their offsets here. */
    private readonly packed?: Omit<PackedText, 'skeleton'>,
  ) {}

  private line(at = this.pos): number {
    let n = 1;
    for (let i = 0; i < at && i < this.text.length; i++) if (this.text.charCodeAt(i) === 10) n++;
    // The line breaks inside packed sequences before `at` are not in the text.
    for (const b of this.packed?.breaks ?? []) if (b.at < at) n += b.lines;
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
        } else out += `\\${d ?? ''}`;
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
    if (open === '[' && this.text[this.pos] === PLACEHOLDER && this.packed) {
      const end = this.text.indexOf(']', this.pos);
      const seq = this.packed.seqs[Number(this.text.slice(this.pos + 1, end))];
      if (end < 0 || seq === undefined) this.fail('a packed sequence is missing');
      this.pos = end + 1;
      return { kind: 'seq', items: [], packed: seq };
    }
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
  return parsePacked({ skeleton: text, seqs: [], breaks: [] });
}

/** Parses what PackingScanner (packed.ts) left of a document: its long number sequences come back packed. */
export function parsePacked({ skeleton, seqs, breaks }: PackedText): YValue {
  const noBom = skeleton.replace(/^\uFEFF/, '');
  const head = noBom.trimStart();
  if (head.startsWith('<')) throw new YamlError('this is XML; only the YAML FileStorage format is supported');
  if (head.startsWith('{')) throw new YamlError('this looks like JSON; only the YAML FileStorage format is supported');
  if (!/^%YAML[: ]1\.[0-9]/.test(head)) throw new YamlError('missing the "%YAML:1.0" header of an OpenCV FileStorage file');
  const cut = skeleton.length - head.length;
  return new Parser(head, { seqs, breaks: breaks.map((b) => ({ at: b.at - cut, lines: b.lines })) }).parseDocument();
}
