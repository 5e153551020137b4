/**
 * `model.pickle`: the label map (name -> integer id) as a real Python pickle of a `dict[str, int]`.
 *
 * The encoder writes what CPython 3.8+ `pickle.dump(d, f)` writes by default (protocol 4), byte for
 * byte: PROTO 4, FRAMEs of up to ~64 KiB, EMPTY_DICT + MEMOIZE, then SETITEM for one entry or
 * MARK ... SETITEMS batches of 1000, SHORT_BINUNICODE / BINUNICODE + MEMOIZE for names,
 * BININT1 / BININT2 / BININT / LONG1 for ids, STOP.
 * The decoder is a small stack machine over the opcodes Python (protocols 0 to 5) uses for such a
 * dict and rejects everything else: no classes, no globals, nothing is ever evaluated.
 *
 * Runs unchanged in Node and browsers (Uint8Array in and out).
 *
 * Hand-made rather than a library: the one shape needed is a dict of str -> int, written byte for byte as
 * CPython's pickle.dump writes it with protocol 4, and read from any protocol while refusing anything else.
 * The pickle packages on npm only read (pickleparser; jpickle, protocols 0 to 2), and pickleparser by default
 * turns classes and globals into placeholder objects, so this file's writer and checks would be needed anyway.
 */

// Opcodes (Lib/pickle.py names).
const MARK = 0x28; // (
const STOP = 0x2e; // .
const INT = 0x49; // I
const BININT = 0x4a; // J
const BININT1 = 0x4b; // K
const LONG = 0x4c; // L
const BININT2 = 0x4d; // M
const UNICODE = 0x56; // V
const BINUNICODE = 0x58; // X
const DICT = 0x64; // d
const GET = 0x67; // g
const BINGET = 0x68; // h
const LONG_BINGET = 0x6a; // j
const PUT = 0x70; // p
const BINPUT = 0x71; // q
const LONG_BINPUT = 0x72; // r
const SETITEM = 0x73; // s
const SETITEMS = 0x75; // u
const EMPTY_DICT = 0x7d; // }
const PROTO = 0x80;
const LONG1 = 0x8a;
const LONG4 = 0x8b;
const SHORT_BINUNICODE = 0x8c;
const BINUNICODE8 = 0x8d;
const MEMOIZE = 0x94;
const FRAME = 0x95;

const FRAME_SIZE_TARGET = 64 * 1024;
const FRAME_SIZE_MIN = 4;
const FRAME_HEADER_SIZE = 9;
const BATCHSIZE = 1000;

/** A name -> id map; a Map keeps any insertion order (objects list integer-like keys first). */
export type LabelMap = Record<string, number>;

// ---------------------------------------------------------------- UTF-8 with surrogatepass

/** Python's str.encode('utf-8', 'surrogatepass'): lone surrogates become 3-byte sequences. */
function encodeUtf8(s: string): Uint8Array {
  const out: number[] = [];
  for (let i = 0; i < s.length; i++) {
    let c = s.charCodeAt(i);
    if (c >= 0xd800 && c < 0xdc00 && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d < 0xe000) {
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
      }
    }
    if (c < 0x80) out.push(c);
    else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 63));
    else if (c < 0x10000) out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
    else out.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 63), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
  }
  return Uint8Array.from(out);
}

/** Strict UTF-8 decoding that also accepts encoded surrogates, like Python's 'surrogatepass'. */
function decodeUtf8(b: Uint8Array, start: number, end: number): string {
  let s = '';
  let i = start;
  const bad = () => new Error(`pickle: invalid UTF-8 in a string at byte ${i}`);
  while (i < end) {
    const c = b[i];
    let cp: number;
    let n: number;
    if (c < 0x80) {
      cp = c;
      n = 0;
    } else if (c >= 0xc2 && c < 0xe0) {
      cp = c & 31;
      n = 1;
    } else if (c >= 0xe0 && c < 0xf0) {
      cp = c & 15;
      n = 2;
    } else if (c >= 0xf0 && c < 0xf5) {
      cp = c & 7;
      n = 3;
    } else throw bad();
    for (let k = 1; k <= n; k++) {
      const d = b[i + k];
      if (i + k >= end || (d & 0xc0) !== 0x80) throw bad();
      cp = (cp << 6) | (d & 63);
    }
    if ((n === 2 && cp < 0x800) || (n === 3 && (cp < 0x10000 || cp > 0x10ffff))) throw bad();
    s += String.fromCodePoint(cp);
    i += n + 1;
  }
  return s;
}

// ---------------------------------------------------------------- encoder

class Writer {
  private buf = new Uint8Array(256);
  private len = 0;
  private frameStart = -1;
  framing = false;

  private ensure(n: number): void {
    if (this.len + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.len + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
  }

  /** _Pickler_Write: opens a frame (reserving its header) on the first write after a commit. */
  write(bytes: ArrayLike<number>): void {
    const need = bytes.length + (this.framing && this.frameStart === -1 ? FRAME_HEADER_SIZE : 0);
    this.ensure(need);
    if (this.framing && this.frameStart === -1) {
      this.frameStart = this.len;
      this.len += FRAME_HEADER_SIZE;
    }
    this.buf.set(bytes, this.len);
    this.len += bytes.length;
  }

  /** _Pickler_CommitFrame: writes the header, or drops it for a frame under FRAME_SIZE_MIN bytes. */
  commitFrame(): void {
    if (!this.framing || this.frameStart === -1) return;
    const frameLen = this.len - this.frameStart - FRAME_HEADER_SIZE;
    if (frameLen >= FRAME_SIZE_MIN) {
      const h = this.frameStart;
      this.buf[h] = FRAME;
      let v = frameLen;
      for (let k = 1; k <= 8; k++) {
        this.buf[h + k] = v % 256;
        v = Math.floor(v / 256);
      }
    } else {
      this.buf.copyWithin(this.frameStart, this.frameStart + FRAME_HEADER_SIZE, this.len);
      this.len -= FRAME_HEADER_SIZE;
    }
    this.frameStart = -1;
  }

  /** Called before each object is saved: a frame that reached the target size is closed. */
  opcodeBoundary(): void {
    if (!this.framing || this.frameStart === -1) return;
    if (this.len - this.frameStart - FRAME_HEADER_SIZE >= FRAME_SIZE_TARGET) this.commitFrame();
  }

  /** _Pickler_write_bytes: a payload of a frame's size or more goes outside any frame. */
  writeWithPayload(header: number[], payload: Uint8Array): void {
    if (payload.length >= FRAME_SIZE_TARGET) {
      this.commitFrame();
      const framing = this.framing;
      this.framing = false;
      this.write(header);
      this.write(payload);
      this.framing = framing;
    } else {
      this.write(header);
      this.write(payload);
    }
  }

  result(): Uint8Array {
    return this.buf.slice(0, this.len);
  }
}

function le(value: number, n: number): number[] {
  const out: number[] = [];
  for (let k = 0; k < n; k++) {
    out.push(value % 256);
    value = Math.floor(value / 256);
  }
  return out;
}

function saveInt(w: Writer, v: number): void {
  if (v >= 0 && v <= 0xff) w.write([BININT1, v]);
  else if (v >= 0 && v <= 0xffff) w.write([BININT2, v & 0xff, v >> 8]);
  else if (v >= -0x80000000 && v <= 0x7fffffff) w.write([BININT, v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, (v >>> 24) & 0xff]);
  else {
    // LONG1: little-endian two's complement, (bit_length >> 3) + 1 bytes, minus a redundant 0xff.
    const x = BigInt(v);
    const mag = x < 0n ? -x : x;
    let bitLength = mag.toString(2).length;
    if (x < 0n && (mag & (mag - 1n)) === 0n) bitLength -= 1; // (-2^k).bit_length() is k+1, two's complement needs k+1 bits
    let nbytes = (bitLength >> 3) + 1;
    const bytes: number[] = [];
    let t = x < 0n ? (1n << BigInt(8 * nbytes)) + x : x;
    for (let k = 0; k < nbytes; k++) {
      bytes.push(Number(t & 0xffn));
      t >>= 8n;
    }
    if (x < 0n && nbytes > 1 && bytes[nbytes - 1] === 0xff && (bytes[nbytes - 2] & 0x80) !== 0) {
      bytes.pop();
      nbytes--;
    }
    w.write([LONG1, nbytes, ...bytes]);
  }
}

function saveStr(w: Writer, s: string): void {
  const utf8 = encodeUtf8(s);
  const n = utf8.length;
  if (n < 256) w.writeWithPayload([SHORT_BINUNICODE, n], utf8);
  else if (n <= 0xffffffff) w.writeWithPayload([BINUNICODE, ...le(n, 4)], utf8);
  else w.writeWithPayload([BINUNICODE8, ...le(n, 8)], utf8);
  w.write([MEMOIZE]);
}

/**
 * `pickle.dumps(d)` of Python 3.8+ (default protocol 4) for a dict of str -> int, byte for byte.
 * Ids must be safe integers. Entries are written in the map's iteration order.
 */
export function encodeLabelMapPickle(map: LabelMap | Map<string, number>): Uint8Array {
  const entries: [string, number][] = map instanceof Map ? [...map] : Object.entries(map);
  for (const [k, v] of entries) {
    if (typeof k !== 'string') throw new Error(`pickle: label names must be strings, got ${typeof k}`);
    if (!Number.isSafeInteger(v)) throw new Error(`pickle: label id for "${k}" must be a safe integer, got ${v}`);
  }
  const w = new Writer();
  w.write([PROTO, 4]);
  w.framing = true;
  w.opcodeBoundary(); // save(dict)
  w.write([EMPTY_DICT, MEMOIZE]);
  const save = (k: string, v: number) => {
    w.opcodeBoundary();
    saveStr(w, k);
    w.opcodeBoundary();
    saveInt(w, v);
  };
  if (entries.length === 1) {
    save(entries[0][0], entries[0][1]);
    w.write([SETITEM]);
  } else if (entries.length > 1) {
    // batch_dict_exact: MARK ... SETITEMS per 1000 items; a full last batch is followed by an empty one.
    let i = 0;
    let n: number;
    do {
      w.write([MARK]);
      n = 0;
      while (i < entries.length && n < BATCHSIZE) {
        save(entries[i][0], entries[i][1]);
        i++;
        n++;
      }
      w.write([SETITEMS]);
    } while (n === BATCHSIZE);
  }
  w.write([STOP]);
  w.commitFrame();
  return w.result();
}

// ---------------------------------------------------------------- decoder

const MARK_OBJ = Symbol('mark');
type Item = string | number | Map<string, number> | typeof MARK_OBJ;

const OPCODE_NAMES: Record<number, string> = {
  0x63: 'GLOBAL',
  0x93: 'STACK_GLOBAL',
  0x52: 'REDUCE',
  0x62: 'BUILD',
  0x69: 'INST',
  0x6f: 'OBJ',
  0x81: 'NEWOBJ',
  0x92: 'NEWOBJ_EX',
  0x4e: 'NONE',
  0x88: 'NEWTRUE',
  0x89: 'NEWFALSE',
  0x46: 'FLOAT',
  0x47: 'BINFLOAT',
  0x5d: 'EMPTY_LIST',
  0x29: 'EMPTY_TUPLE',
  0x74: 'TUPLE',
  0x42: 'BINBYTES',
  0x43: 'SHORT_BINBYTES',
  0x53: 'STRING',
  0x54: 'BINSTRING',
  0x55: 'SHORT_BINSTRING',
  0x50: 'PERSID',
  0x51: 'BINPERSID',
  0x8f: 'EMPTY_SET',
  0x61: 'APPEND',
  0x65: 'APPENDS',
  0x30: 'POP',
  0x31: 'POP_MARK',
  0x32: 'DUP',
  0x97: 'NEXT_BUFFER',
  0x98: 'READONLY_BUFFER',
  0x96: 'BYTEARRAY8',
  0x6c: 'LIST',
};

/** Protocol-0 UNICODE argument: raw-unicode-escape (latin-1 bytes, \uXXXX and \UXXXXXXXX). */
function rawUnicodeEscape(b: Uint8Array, start: number, end: number): string {
  let s = '';
  let i = start;
  while (i < end) {
    const c = b[i];
    if (c === 0x5c) {
      let run = 0;
      while (i + run < end && b[i + run] === 0x5c) run++;
      const next = b[i + run];
      // Only an odd run of backslashes before u/U starts an escape.
      if (run % 2 === 1 && (next === 0x75 || next === 0x55)) {
        s += '\\'.repeat(run - 1);
        const digits = next === 0x75 ? 4 : 8;
        const hex = String.fromCharCode(...b.subarray(i + run + 1, i + run + 1 + digits));
        if (hex.length !== digits || !/^[0-9a-fA-F]+$/.test(hex)) throw new Error('pickle: bad \\u escape in UNICODE');
        const cp = parseInt(hex, 16);
        if (cp > 0x10ffff) throw new Error('pickle: \\U escape out of range in UNICODE');
        s += String.fromCodePoint(cp);
        i += run + 1 + digits;
        continue;
      }
      s += '\\'.repeat(run);
      i += run;
      continue;
    }
    s += String.fromCharCode(c);
    i++;
  }
  return s;
}

/** Python's int() of a protocol-0 INT/LONG argument (decimal, optional sign, maybe a trailing L). */
function parseDecimalInt(text: string, what: string): number {
  const m = /^\s*([-+]?)(\d+)L?\s*$/.exec(text);
  if (!m) throw new Error(`pickle: bad ${what} argument "${text}"`);
  const v = BigInt(m[1] + m[2]);
  if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < BigInt(Number.MIN_SAFE_INTEGER)) {
    throw new Error(`pickle: integer ${v} is beyond JavaScript's safe integer range`);
  }
  return Number(v);
}

/**
 * Reads a pickled `dict[str, int]` written by Python with any protocol from 0 to 5.
 * Throws an Error naming the problem for truncated data, other types, or unsupported opcodes.
 */
export function decodeLabelMapPickle(bytes: Uint8Array): LabelMap {
  if (!(bytes instanceof Uint8Array)) throw new Error('pickle: expected a Uint8Array');
  if (bytes.length === 0) throw new Error('pickle: empty input');
  const stack: Item[] = [];
  const memo = new Map<number, Item>();
  let pos = 0;
  let frameEnd = -1;

  const need = (n: number, what: string) => {
    if (pos + n > bytes.length) throw new Error(`pickle: truncated data reading ${what} at byte ${pos}`);
    if (frameEnd >= 0 && pos + n > frameEnd) throw new Error(`pickle: ${what} at byte ${pos} crosses the end of its frame`);
  };
  const uint = (n: number, what: string): number => {
    need(n, what);
    let v = 0;
    for (let k = n - 1; k >= 0; k--) v = v * 256 + bytes[pos + k];
    pos += n;
    return v;
  };
  const line = (what: string): string => {
    const nl = bytes.indexOf(0x0a, pos);
    if (nl < 0) throw new Error(`pickle: truncated data reading ${what} at byte ${pos}`);
    const s = String.fromCharCode(...bytes.subarray(pos, nl));
    pos = nl + 1;
    return s;
  };
  const pop = (what: string): Item => {
    const v = stack.pop();
    if (v === undefined) throw new Error(`pickle: stack underflow at ${what}`);
    if (v === MARK_OBJ) throw new Error(`pickle: unexpected MARK at ${what}`);
    return v;
  };
  const popToMark = (what: string): Item[] => {
    const i = stack.lastIndexOf(MARK_OBJ);
    if (i < 0) throw new Error(`pickle: ${what} without a MARK`);
    return stack.splice(i).slice(1);
  };
  const setItem = (d: Item, k: Item, v: Item, what: string) => {
    if (!(d instanceof Map)) throw new Error(`pickle: ${what} on something that is not a dict`);
    if (typeof k !== 'string') throw new Error(`pickle: dict key is not a str (${what})`);
    if (typeof v !== 'number') throw new Error(`pickle: value for "${k}" is not an int (${what})`);
    d.set(k, v);
  };
  const pushStr = (n: number, what: string) => {
    need(n, what);
    stack.push(decodeUtf8(bytes, pos, pos + n));
    pos += n;
  };
  const memoGet = (i: number) => {
    if (!memo.has(i)) throw new Error(`pickle: memo entry ${i} was never stored`);
    stack.push(memo.get(i) as Item);
  };
  const memoPut = (i: number) => {
    const top = stack[stack.length - 1];
    if (top === undefined || top === MARK_OBJ) throw new Error('pickle: nothing to memoize');
    memo.set(i, top);
  };

  for (;;) {
    if (frameEnd >= 0 && pos === frameEnd) frameEnd = -1;
    if (pos >= bytes.length) throw new Error('pickle: truncated data (no STOP opcode)');
    const at = pos;
    const op = bytes[pos++];
    switch (op) {
      case PROTO: {
        const proto = uint(1, 'PROTO');
        if (proto > 5) throw new Error(`pickle: unsupported protocol ${proto}`);
        break;
      }
      case FRAME: {
        const n = uint(8, 'FRAME');
        if (pos + n > bytes.length) throw new Error(`pickle: truncated data: frame of ${n} bytes at byte ${at}`);
        frameEnd = pos + n;
        break;
      }
      case STOP: {
        if (stack.length !== 1) throw new Error(`pickle: ${stack.length} objects on the stack at STOP`);
        const d = stack[0];
        if (!(d instanceof Map)) throw new Error('pickle: the pickled object is not a dict');
        if (pos !== bytes.length) throw new Error(`pickle: ${bytes.length - pos} bytes after STOP`);
        const out: LabelMap = {};
        for (const [k, v] of d) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
        return out;
      }
      case MARK:
        stack.push(MARK_OBJ);
        break;
      case EMPTY_DICT:
        stack.push(new Map());
        break;
      case DICT: {
        const items = popToMark('DICT');
        if (items.length % 2) throw new Error('pickle: DICT with an odd number of items');
        const d = new Map<string, number>();
        for (let k = 0; k < items.length; k += 2) setItem(d, items[k], items[k + 1], 'DICT');
        stack.push(d);
        break;
      }
      case SETITEM: {
        const v = pop('SETITEM');
        const k = pop('SETITEM');
        setItem(stack[stack.length - 1], k, v, 'SETITEM');
        break;
      }
      case SETITEMS: {
        const items = popToMark('SETITEMS');
        if (items.length % 2) throw new Error('pickle: SETITEMS with an odd number of items');
        const d = stack[stack.length - 1];
        for (let k = 0; k < items.length; k += 2) setItem(d, items[k], items[k + 1], 'SETITEMS');
        break;
      }
      case SHORT_BINUNICODE:
        pushStr(uint(1, 'SHORT_BINUNICODE'), 'SHORT_BINUNICODE');
        break;
      case BINUNICODE:
        pushStr(uint(4, 'BINUNICODE'), 'BINUNICODE');
        break;
      case BINUNICODE8:
        pushStr(uint(8, 'BINUNICODE8'), 'BINUNICODE8');
        break;
      case UNICODE: {
        const nl = bytes.indexOf(0x0a, pos);
        if (nl < 0) throw new Error(`pickle: truncated data reading UNICODE at byte ${pos}`);
        stack.push(rawUnicodeEscape(bytes, pos, nl));
        pos = nl + 1;
        break;
      }
      case BININT1:
        stack.push(uint(1, 'BININT1'));
        break;
      case BININT2:
        stack.push(uint(2, 'BININT2'));
        break;
      case BININT: {
        const u = uint(4, 'BININT');
        stack.push(u >= 0x80000000 ? u - 0x100000000 : u);
        break;
      }
      case INT: {
        const text = line('INT');
        // Protocol 0 spells True/False as I01/I00: those are bools, not ids.
        if (text === '01' || text === '00') throw new Error('pickle: a bool where an int id was expected');
        stack.push(parseDecimalInt(text, 'INT'));
        break;
      }
      case LONG:
        stack.push(parseDecimalInt(line('LONG'), 'LONG'));
        break;
      case LONG1:
      case LONG4: {
        const n = uint(op === LONG1 ? 1 : 4, 'LONG1');
        need(n, 'LONG1');
        let v = 0n;
        for (let k = n - 1; k >= 0; k--) v = (v << 8n) | BigInt(bytes[pos + k]);
        if (n > 0 && bytes[pos + n - 1] & 0x80) v -= 1n << BigInt(8 * n);
        pos += n;
        if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < BigInt(Number.MIN_SAFE_INTEGER)) {
          throw new Error(`pickle: integer ${v} is beyond JavaScript's safe integer range`);
        }
        stack.push(Number(v));
        break;
      }
      case MEMOIZE:
        memoPut(memo.size);
        break;
      case PUT:
        memoPut(parseDecimalInt(line('PUT'), 'PUT'));
        break;
      case BINPUT:
        memoPut(uint(1, 'BINPUT'));
        break;
      case LONG_BINPUT:
        memoPut(uint(4, 'LONG_BINPUT'));
        break;
      case GET:
        memoGet(parseDecimalInt(line('GET'), 'GET'));
        break;
      case BINGET:
        memoGet(uint(1, 'BINGET'));
        break;
      case LONG_BINGET:
        memoGet(uint(4, 'LONG_BINGET'));
        break;
      default: {
        const name = OPCODE_NAMES[op];
        throw new Error(
          `pickle: unsupported opcode ${name ?? `0x${op.toString(16).padStart(2, '0')}`} at byte ${at}` +
            (name ? '; only a dict of str -> int is accepted' : ''),
        );
      }
    }
  }
}
