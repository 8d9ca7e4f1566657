// The OS layer cache's keys: the canonical form of everything that determines a layer's tree, and its
// sha256. The local key holds the host ids of the tree's owners; the shared tier's holds none.
import { createHash } from 'node:crypto';
import type { BuildHost } from '../build-host';
import type { OsLayerSpec } from '../stages';
import { RECIPE_VERSION } from './recipe';

/** The canonical form of everything that determines the tree, and its sha256: the cache key. */
export function layerKey(spec: OsLayerSpec, indexes: Record<string, string>, host: Pick<BuildHost, 'owners'> = { owners: 'host' }): { key: string; canonical: unknown } {
  // The host ids of the tree's owners: a tree made in a namespace is read only through the same one.
  return keyOf(spec, indexes, host.owners);
}

/**
 * The key of a layer in the shared tier (shared-tier.ts): the same, but for the host ids, which its
 * archive does not hold. How it was built (as root, or in a namespace) stays part of it.
 */
export function sharedLayerKey(spec: OsLayerSpec, indexes: Record<string, string>, host: Pick<BuildHost, 'namespaced'>): string {
  return keyOf(spec, indexes, host.namespaced ? 'namespace' : 'host').key;
}

function keyOf(spec: OsLayerSpec, indexes: Record<string, string>, owners: string): { key: string; canonical: unknown } {
  const canonical = {
    recipe: RECIPE_VERSION,
    // Built with SOURCE_DATE_EPOCH: the newest date of the indexes below (mirror-state.ts).
    sourceDateEpoch: 'newest InRelease Date',
    owners,
    suite: spec.suite,
    arch: spec.arch,
    profile: spec.profile,
    kernel: spec.kernel,
    cloudInit: spec.cloudInit,
    mirror: { archive: spec.mirror.archive, security: spec.mirror.security ?? null },
    packages: [...spec.packages].map((p) => [p.name, p.arch ?? '', p.version ?? '']).sort((a, b) => (a.join('\0') < b.join('\0') ? -1 : 1)),
    indexes: Object.keys(indexes).sort().map((u) => [u, indexes[u]]),
    // Left out of the JSON when unset: the keys of layers without one stay what they were.
    partition: spec.partition,
  };
  return { key: createHash('sha256').update(JSON.stringify(canonical)).digest('hex'), canonical };
}
