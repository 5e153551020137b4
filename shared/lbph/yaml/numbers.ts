/**
 * Numbers as OpenCV 4.6's FileStorage writes them (fs::floatToString / doubleToString): int32-valued reals as
 * "N.", others as printf "%.8e" (float) or "%.16e" (double) rounded as glibc rounds them (ties to even on the
 * exact binary value, where JavaScript's toExponential breaks ties upwards), and .Inf / -.Inf / .Nan. Part of
 * the OpenCV YAML codec (opencv-yaml.ts).
 */

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
  if (m?.[2].endsWith('5')) {
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
      s = `${ks[0]}${prec > 0 ? `.${ks.slice(1)}` : ''}e${exp < 0 ? '-' : '+'}${Math.abs(exp)}`;
    }
  }
  // C prints at least two exponent digits.
  if (s.length - s.indexOf('e') === 3) s = `${s.slice(0, -1)}0${s.slice(-1)}`;
  return neg ? `-${s}` : s;
}

/** OpenCV's fs::floatToString / doubleToString (non-JSON): "N." for int32-valued, else %.8e / %.16e. */
export function formatReal(v: number, prec: 8 | 16): string {
  if (Number.isNaN(v)) return '.Nan';
  if (v === Infinity) return '.Inf';
  if (v === -Infinity) return '-.Inf';
  // cvRound(v) == v holds only for integers representable as int32 (cvRound saturates to INT_MIN).
  if (Number.isInteger(v) && v >= -2147483648 && v <= 2147483647) return `${v === 0 ? 0 : v}.`;
  return printfExp(v, prec);
}
