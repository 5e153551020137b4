/**
 * How many items have each key, as a plain object (`{ person: 2, cup: 1 }`). Counted in a Map first: counting into
 * `{}` directly reads inherited members, so a label or class named `constructor` counted as
 * "function Object() { [native code] }1" (found by the API fuzzer). Object.fromEntries defines own properties,
 * so `__proto__` is an ordinary key too.
 */
export function countBy<T>(items: Iterable<T>, key: (item: T) => string): Record<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) {
    const k = key(item);
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  return Object.fromEntries(counts);
}
