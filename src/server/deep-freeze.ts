/** Records shared by every caller are frozen: a change would leak into every later answer. */
const deep = new WeakSet<object>();

export function deepFreeze<T>(v: T): T {
  if (v !== null && typeof v === 'object' && !deep.has(v)) {
    Object.freeze(v);
    deep.add(v);
    for (const x of Object.values(v)) deepFreeze(x);
  }
  return v;
}

/** Made immutable by deepFreeze, down to its last field: what is derived from it (its encoding) may be kept with it. */
export function isDeepFrozen(v: unknown): boolean {
  return v !== null && typeof v === 'object' && deep.has(v);
}
