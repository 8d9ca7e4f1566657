// Values derived from stored rows (a resolved API key, a record's view), kept while the store's
// generation lasts: any write, any rollback, another connection's or node's commit empties the memo,
// so a kept value is never older than the rows it came from. A value computed across an `await` is
// kept only when the generation did not move meanwhile: what it read may be older than the change.
import type { Store } from './port';

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

  /** The kept value at once, or a promise of the computed one (kept when the generation held). */
  get(key: string, compute: () => Promise<V>): V | Promise<V> {
    const g = this.store.generation();
    if (g !== this.generation) {
      this.values.clear();
      this.generation = g;
    }
    const kept = this.values.get(key);
    if (kept !== undefined || this.values.has(key)) return kept as V;
    this.misses++;
    return compute().then((v) => {
      // A compute that wrote (or ran a transaction), or a commit seen meanwhile, moved the generation:
      // what it saw may be stale already.
      if (this.store.generation() === g && this.generation === g) {
        if (this.values.size >= this.max) this.values.clear();
        this.values.set(key, v);
      }
      return v;
    });
  }
}
