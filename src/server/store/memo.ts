// Values derived from stored rows (a resolved API key, a record's view), kept while the store's
// generation lasts: any write, any rollback, another connection's commit empties the memo, so a kept
// value is never older than the rows it came from. Rule for callers: compute from rows read in the
// same synchronous step as the lookup (no `await` between), or the value may describe rows older than
// the generation it is filed under.
import type { Store } from './store';

export class GenerationMemo<V> {
  private generation = -1;
  private readonly values = new Map<string, V>();
  /** Calls to compute (misses), for tests that check the cached path is taken and dropped when it should. */
  misses = 0;

  /** `max`: entries kept at once; past it the memo starts empty again (a bound, not an LRU). */
  constructor(
    private readonly store: Pick<Store, 'generation'>,
    private readonly max = 10_000,
  ) {}

  get(key: string, compute: () => V): V {
    const g = this.store.generation();
    if (g !== this.generation) {
      this.values.clear();
      this.generation = g;
    }
    const kept = this.values.get(key);
    if (kept !== undefined || this.values.has(key)) return kept as V;
    this.misses++;
    const v = compute();
    // A compute that wrote (or ran a transaction) moved the generation: what it saw may be stale already.
    if (this.store.generation() === g) {
      if (this.values.size >= this.max) this.values.clear();
      this.values.set(key, v);
    }
    return v;
  }
}
