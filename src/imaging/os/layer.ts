// An OS layer as the cache hands it out: a leased tree, read only, with what was installed in it.
import type { InstalledPackage } from '../stages';
import type { OsLayerProgress } from './progress';

export interface OsLayer {
  /** The root tree: read-only for callers (copy it with `cp -a`, or `mke2fs -d` it). */
  readonly dir: string;
  readonly key: string;
  readonly installed: readonly InstalledPackage[];
  readonly fromCache: boolean;
  /** The tree's size on disk (bytes), as measured when the layer was made. */
  readonly bytes: number;
  /** The SOURCE_DATE_EPOCH the layer was built with: the newest Release date of its mirror state. */
  readonly sourceDateEpoch: number;
  /**
   * The key without the host ids of the tree's owners (`sharedLayerKey`): the same for every host and
   * user that builds this spec from this mirror state, so what derives from it (a disk's ids) is too.
   */
  readonly portableKey?: string | undefined;
  /** Ends the lease: the entry may be evicted again. Idempotent. */
  release(): Promise<void>;
}

export interface OsLayerOptions {
  readonly signal?: AbortSignal | undefined;
  readonly onProgress?: (p: OsLayerProgress) => void;
}

/** What a cache entry's meta.json holds. */
export interface LayerMeta {
  readonly key: string;
  readonly bytes: number;
  readonly installed: InstalledPackage[];
  readonly canonical: unknown;
  readonly builtAt: string;
  readonly sourceDateEpoch: number;
}

/** A lease of `layer` whose release runs `end` once, however often it is called. */
export function leaseOf(layer: Omit<OsLayer, 'fromCache' | 'release'>, fromCache: boolean, end: () => Promise<void>): OsLayer {
  let released = false;
  const { dir, key, installed, bytes, sourceDateEpoch } = layer;
  return {
    dir, key, installed, fromCache, bytes, sourceDateEpoch,
    release: async () => {
      if (released) return;
      released = true;
      await end();
    },
  };
}
