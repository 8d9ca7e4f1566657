// What the routes files share: answering a value that may already be at hand without a promise.

/** `answer(v)` now when `v` is a value, once it resolves when it is a promise. */
export function whenReady<V, R>(v: V | Promise<V>, answer: (v: V) => R): R | Promise<R> {
  return v instanceof Promise ? v.then(answer) : answer(v);
}
