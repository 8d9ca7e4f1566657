// Views of stored records kept between requests: an appliance's view reads its OS profile,
// images and software rows, looks up its distribution and hashes the result (views.ts `stamp`), each
// time it is sent. Kept per store generation (store/memo.ts): any write, rollback or other
// connection's or node's commit drops every kept view, and so does a catalog refresh. Filed by owner, kind and
// id: a view is the record as its owner's URI shows it, whoever asks (the route checked who may).
// Views are frozen, since every request that hits shares the same object.
import type { Ctx } from './context';
import { deepFreeze } from './deep-freeze';
import type { Kind } from './store/docs';
import { GenerationMemo } from './store/memo';

export class ViewCache {
  private memo: GenerationMemo<unknown>;
  private catalog: unknown;
  constructor(private readonly ctx: Pick<Ctx, 'store' | 'catalog'>) {
    this.memo = new GenerationMemo(ctx.store);
    this.catalog = ctx.catalog.distributions;
  }

  /** Views built (misses), across catalog refreshes: tests check the kept view is used, and dropped on change. */
  get misses(): number {
    return this.memo.misses;
  }

  private current(): GenerationMemo<unknown> {
    // A refreshed catalog is a new object: names and architectures of distributions may differ.
    if (this.ctx.catalog.distributions !== this.catalog) {
      const misses = this.memo.misses;
      this.memo = new GenerationMemo(this.ctx.store);
      this.memo.misses = misses;
      this.catalog = this.ctx.catalog.distributions;
    }
    return this.memo;
  }

  /** The view of one record: kept at once, else built (and kept when no commit came meanwhile). */
  one<V extends object>(kind: Kind, owner: string, id: number, build: () => Promise<V>): V | Promise<V> {
    return this.current().get(`1\0${kind}\0${owner}\0${id}`, async () => deepFreeze(await build())) as V | Promise<V>;
  }

  /** The views of all of an owner's records of a kind, in store order. */
  all<V extends object>(kind: Kind, owner: string, build: () => Promise<V[]>): readonly V[] | Promise<readonly V[]> {
    return this.current().get(`*\0${kind}\0${owner}`, async () => Object.freeze(await build())) as readonly V[] | Promise<readonly V[]>;
  }
}

const caches = new WeakMap<object, ViewCache>();

/** The view cache of a server (one per store). */
export function viewCache(ctx: Pick<Ctx, 'store' | 'catalog'>): ViewCache {
  let c = caches.get(ctx.store);
  if (!c) caches.set(ctx.store, (c = new ViewCache(ctx)));
  return c;
}
