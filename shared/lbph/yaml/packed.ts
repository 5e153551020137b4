/**
 * Reading a FileStorage YAML text that may be larger than any string: the text arrives in pieces, and every flow
 * sequence of plain numbers (OpenCV's `data: [ ... ]`, about 118 KB of text per LBPH histogram) is read as it goes
 * into a typed array and left out of the text, which keeps a placeholder in its place. What remains, the file's
 * "skeleton" (about 100 bytes per histogram), is parsed by the ordinary parser (parser.ts, parsePacked), which
 * puts each array back where its placeholder is. A 10,000-face training.yml (1.2 GB) so reads as 1.5 MB of text
 * plus its numbers, never as one string.
 *
 * Anything unusual inside a flow sequence (a quoted or non-numeric item, a nested collection, a comment, a tab, an
 * unterminated sequence) is left to the ordinary parser: the sequence's text goes into the skeleton as it was, and
 * so does the rest of the file, so the result and the errors are the ordinary parser's. Only a sequence longer than
 * RAW_LIMIT characters before such an item fails here, as no writer makes one.
 *
 * Numbers are kept as float64 when they are all integers (labels, counts), else as float32: every non-integer
 * array of an LBPH model is a CV_32F histogram, which OpenCV (and readLbphYaml) reads as float32 anyway.
 */
import { PLACEHOLDER, plainScalarOrInvalid, YamlError } from './parser.js';
/** How much of a flow sequence's text is kept in case it has to go to the ordinary parser after all. */
const RAW_LIMIT = 1 << 20;
/** A line longer than this is looked at for a flow start before its end arrives. */
const LONG_LINE = 1 << 12;

/** The skeleton and its packed sequences. */
export interface PackedText {
  skeleton: string;
  seqs: (Float32Array | Float64Array)[];
  /** For each packed sequence in order: its offset in the skeleton and the line breaks its text had. */
  breaks: { at: number; lines: number }[];
}

/**
 * Where a flow sequence opens on this line (the index of its `[`), or -1: a `[` in a node's place, after the
 * indent, `- ` items, a tag and one `key: `; never inside a key, a quoted string, a plain scalar or a comment.
 */
export function flowStart(line: string): number {
  let i = 0;
  while (line.charCodeAt(i) === 32) i++;
  let keySeen = false;
  for (;;) {
    const c = line[i];
    if (c === '[') return i;
    if (c === '-' && line[i + 1] === ' ') i += 2;
    else if (c === '!') {
      while (i < line.length && line[i] !== ' ' && line[i] !== '\n' && line[i] !== '\r') i++;
      if (line[i] !== ' ') return -1;
    } else if (!keySeen && c !== undefined && !'"\'{#\n\r\t'.includes(c)) {
      const key = /[^:\n\r#]*?:(?= )/y;
      key.lastIndex = i;
      if (!key.test(line)) return -1;
      i = key.lastIndex;
      keySeen = true;
    } else return -1;
    while (line.charCodeAt(i) === 32) i++;
  }
}

export class PackingScanner {
  private skeleton: string[] = [];
  private skeletonLength = 0;
  private seqs: (Float32Array | Float64Array)[] = [];
  private breaks: { at: number; lines: number }[] = [];
  /** Text not handled yet: a partial line, or a partial item of a flow sequence. */
  private pending = '';
  private line = 1;
  /** After a sequence had to go to the ordinary parser, everything else does too. */
  private verbatim = false;
  // The open flow sequence, if any.
  private inFlow = false;
  private values = new Float64Array(1 << 14);
  private count = 0;
  private integers = true;
  /** Whether an item (rather than a comma or the closing bracket) comes next. */
  private wantItem = true;
  private raw: string[] | null = null;
  private rawLength = 0;
  private flowLines = 0;
  /** Set by scanFlow when the text ran out inside an item or between items. */
  private needMore = false;

  push(text: string): void {
    this.pending = this.pending.length ? this.pending + text : text;
    this.scan(false);
  }

  end(): PackedText {
    this.scan(true);
    if (this.inFlow) this.giveUp();
    if (this.pending) this.emit(this.pending);
    this.pending = '';
    return { skeleton: this.skeleton.join(''), seqs: this.seqs, breaks: this.breaks };
  }

  private emit(s: string): void {
    this.skeleton.push(s);
    this.skeletonLength += s.length;
    // A piece is a slice of the text it came in, which V8 keeps whole while the slice lives: joined now and then
    // into a string of its own, the skeleton holds its own ~100 bytes per histogram, not every 1 MB piece read.
    if (this.skeleton.length >= 4096) this.skeleton = [this.skeleton.join('')];
  }

  private scan(atEnd: boolean): void {
    let text = this.pending;
    let pos = 0;
    while (pos < text.length) {
      if (this.verbatim) {
        this.emit(pos ? text.slice(pos) : text);
        pos = text.length;
        break;
      }
      if (this.inFlow) {
        this.needMore = false;
        pos = this.scanFlow(text, pos, atEnd);
        if (this.needMore) break;
        continue;
      }
      const nl = text.indexOf('\n', pos);
      if (nl < 0 && !atEnd && text.length - pos < LONG_LINE) break;
      const lineEnd = nl < 0 ? text.length : nl + 1;
      const line = text.slice(pos, lineEnd);
      const open = flowStart(line);
      if (open < 0) {
        if (nl < 0 && !atEnd) break; // a long line that may still open a sequence further on
        this.emit(line);
        if (nl >= 0) this.line++;
        pos = lineEnd;
        continue;
      }
      this.emit(line.slice(0, open));
      this.openFlow();
      // The rest of the pending text may be long: from here on it is read in place.
      text = text.slice(pos + open + 1);
      pos = 0;
    }
    this.pending = pos === 0 ? text : text.slice(pos);
  }

  private openFlow(): void {
    this.inFlow = true;
    this.count = 0;
    this.integers = true;
    this.wantItem = true;
    this.raw = [];
    this.rawLength = 0;
    this.flowLines = 0;
  }

  private keepRaw(s: string): void {
    if (this.raw === null) return;
    this.rawLength += s.length;
    if (this.rawLength > RAW_LIMIT) this.raw = null;
    else this.raw.push(s);
  }

  /** The open sequence goes to the ordinary parser as text, and so does the rest of the file. */
  private giveUp(): void {
    if (this.raw === null) {
      throw new YamlError(
        `a flow sequence longer than ${RAW_LIMIT} characters holds something other than plain numbers; only numbers are supported there`,
        this.line,
      );
    }
    this.emit(`[${this.raw.join('')}`);
    this.inFlow = false;
    this.verbatim = true;
    this.line += this.flowLines;
  }

  /**
   * Reads the open sequence from text[pos]; returns where it stopped: after its `]`, where it gave up (the rest goes
   * to the ordinary parser), or, with needMore set, where the next piece has to continue.
   */
  private scanFlow(text: string, pos: number, atEnd: boolean): number {
    let i = pos;
    const n = text.length;
    for (;;) {
      // Blanks and line breaks between items.
      let c = text.charCodeAt(i);
      while (c === 32 || c === 10 || c === 13) {
        if (c === 10) this.flowLines++;
        c = text.charCodeAt(++i);
      }
      if (i >= n) {
        this.keepRaw(text.slice(pos, n));
        if (atEnd)
          this.giveUp(); // unterminated: the ordinary parser says so
        else this.needMore = true;
        return n;
      }
      if (c === 93 /* ] */ && !(this.wantItem && this.count > 0)) {
        this.keepRaw(text.slice(pos, i));
        this.closeFlow();
        return i + 1;
      }
      if (!this.wantItem) {
        if (c !== 44 /* , */) return this.stopAt(text, pos, i);
        this.wantItem = true;
        i++;
        continue;
      }
      // An item: plain text up to , ] } or a line break (as parseFlow reads it). Tabs and comments are the
      // ordinary parser's business, and so are items that open a quote, a collection or a tag.
      let end = i;
      let odd = c === 34 || c === 39 || c === 91 || c === 123 || c === 33;
      while (end < n) {
        const d = text.charCodeAt(end);
        if (d === 44 || d === 93 || d === 125 || d === 10 || d === 13) break;
        if (d === 35 || d === 9) odd = true;
        end++;
      }
      if (end >= n && !atEnd) {
        // Its end has not arrived: read it again with the next piece.
        this.keepRaw(text.slice(pos, i));
        this.needMore = true;
        return i;
      }
      if (odd) return this.stopAt(text, pos, i);
      let v: number | string | undefined;
      let item = '';
      // "0.", most of a histogram, without a slice.
      if (end - i === 2 && c === 48 && text.charCodeAt(i + 1) === 46) v = 0;
      else {
        item = text.slice(i, end);
        if (text.charCodeAt(end - 1) === 32) item = item.trimEnd();
        v = plainScalarOrInvalid(item);
      }
      if (typeof v !== 'number') {
        if (v === undefined) throw new YamlError(`invalid number "${item}"`, this.line + this.flowLines);
        return this.stopAt(text, pos, i);
      }
      this.add(v);
      this.wantItem = false;
      i = end;
    }
  }

  /** Gives up at text[at]: what was read of this piece goes to the raw text, the rest to the ordinary parser. */
  private stopAt(text: string, from: number, at: number): number {
    this.keepRaw(text.slice(from, at));
    this.giveUp();
    return at;
  }

  private add(v: number): void {
    if (this.count === this.values.length) {
      const grown = new Float64Array(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.count++] = v;
    if (this.integers && !Number.isInteger(v)) this.integers = false;
  }

  private closeFlow(): void {
    const values = this.values.subarray(0, this.count);
    const packed = this.integers ? Float64Array.from(values) : Float32Array.from(values);
    this.breaks.push({ at: this.skeletonLength, lines: this.flowLines });
    this.emit(`[${PLACEHOLDER}${this.seqs.length}]`);
    this.seqs.push(packed);
    this.line += this.flowLines;
    this.inFlow = false;
    this.raw = null;
  }
}
