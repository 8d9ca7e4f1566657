// The catalog of operating systems, base profiles and packages (docs/contracts.md "Catalog"), read
// once from the data file that scripts/build-catalog.mjs writes, and cached.
import { resolve } from 'node:path';
import { listQuery, type ListOptions } from '../../fiql';
import { formatVersion, packageKey } from '../../imaging/debian';
import type { DistribProfile, Distribution, Pkg } from '../../model/resources';
import { defaultDataFile, readCatalogData, type CatalogMeta, type PackageEntry } from './data-file';
import { buildDistributions, buildProfile, DEBIAN_ID, PROFILES, selectProfilePackages } from './distributions';
import { packageSelectors, toPkg } from './packages';
import { deepFreeze } from '../deep-freeze';

export { DEBIAN_ID, WINDOWS_ID } from './distributions';
export type { CatalogMeta, PackageEntry } from './data-file';

export interface PackageSearch extends ListOptions {
  /** Only the latest version of each name and arch. */
  latestOnly?: boolean | undefined;
}

export interface Catalog {
  readonly meta: CatalogMeta;
  readonly distributions: readonly Distribution[];
  getDistribution(distId: number): Distribution | undefined;
  /** Base profiles of a distribution; empty for an unknown one. */
  profiles(distId: number): DistribProfile[];
  getProfile(distId: number, pid: number): DistribProfile | undefined;
  /** Packages a base profile installs; empty for a Windows or unknown profile. */
  profilePackages(distId: number, pid: number): Pkg[];
  /**
   * FIQL search over the packages (wire contract §7); `total` before paging. Empty for a distribution
   * without a repository or an unknown one (the caller answers 404 for those from `getDistribution`).
   * Throws FiqlError for a bad query, orderBy, count or offset.
   */
  searchPackages(distId: number, opts?: PackageSearch): { total: number; items: Pkg[] };
  /**
   * The same search with its records made as they are read (a whole-catalog answer is streamed, never
   * held); `version` names the catalog's contents (the same search of the same version is the same list).
   */
  packageCursor(distId: number, opts?: PackageSearch): PackageCursor;
  getPackage(distId: number, pkgId: number): Pkg | undefined;
  /**
   * The current version (`[epoch:]upstream[-revision]`, as the index writes it) of a Debian package, or
   * undefined when the catalog has no such name and arch: what a pinned version is checked against.
   */
  resolveVersion(name: string, arch: string): string | undefined;
}

export interface PackageCursor {
  total: number;
  items: Iterable<Pkg>;
  version: string;
}

const cache = new Map<string, Catalog>();

/** The catalog of `file` (default: `defaultDataFile()`), read on first use and cached by path. */
export function loadCatalog(file?: string): Catalog {
  const path = resolve(file ?? defaultDataFile());
  let c = cache.get(path);
  if (!c) {
    c = createCatalog(path);
    cache.set(path, c);
  }
  return c;
}

/** The catalog of `file`, read now and not cached (a refreshed file is read again under the same path). */
export function createCatalog(file: string): Catalog {
  const data = readCatalogData(file);
  const { meta, packages } = data;
  const latest = packages.filter((e) => e.latest);
  const byId = new Map(packages.map((e) => [e.id, e]));
  const current = new Map(latest.map((e) => [packageKey(e.name, e.arch), e]));
  const selectors = packageSelectors(meta);
  const distributions = deepFreeze(buildDistributions(meta));
  // Rows are sorted by name (then arch): a search ordered by name needs no sort, one by dbId only while
  // ids still follow the rows (new names of a refresh get ids above the others).
  const idsInOrder = packages.every((e, k) => k === 0 || packages[k - 1]!.id < e.id);
  const hints = { naturalOrder: idsInOrder ? ['dbId', 'name'] : ['name'] };
  const profilePkgs = new Map<number, PackageEntry[]>(PROFILES.map((p) => [p.id, selectProfilePackages(p, packages)]));
  const profileRecords = PROFILES.map((p) => ({ def: p, record: buildProfile(p, meta, profilePkgs.get(p.id)!) }));
  const hasRepo = (distId: number) => distId === DEBIAN_ID;
  // Fresh copies out, so no caller can change the cached records.
  const clone = <T>(v: T): T => structuredClone(v);
  const packageCursor = (distId: number, opts: PackageSearch = {}): PackageCursor => {
    if (!hasRepo(distId)) {
      // Still validate the query, so a bad one is a 400 whatever the distribution.
      listQuery([], opts, selectors);
      return { total: 0, items: [], version: meta.digest };
    }
    const r = listQuery(opts.latestOnly ? latest : packages, opts, selectors, hints);
    return { total: r.total, items: (function* () { for (const e of r.items) yield toPkg(distId, e, meta); })(), version: meta.digest };
  };

  return {
    meta,
    distributions,
    getDistribution: (distId) => {
      const d = distributions.find((x) => x.dbId === distId);
      return d && clone(d);
    },
    profiles: (distId) => profileRecords.filter((p) => p.def.distId === distId).map((p) => clone(p.record)),
    getProfile: (distId, pid) => {
      const p = profileRecords.find((x) => x.def.distId === distId && x.def.id === pid);
      return p && clone(p.record);
    },
    profilePackages: (distId, pid) => {
      const def = PROFILES.find((p) => p.distId === distId && p.id === pid);
      return def ? (profilePkgs.get(def.id) ?? []).map((e) => toPkg(distId, e, meta)) : [];
    },
    searchPackages: (distId, opts) => {
      const c = packageCursor(distId, opts);
      return { total: c.total, items: [...c.items] };
    },
    packageCursor,
    getPackage: (distId, pkgId) => {
      if (!hasRepo(distId) || !Number.isSafeInteger(pkgId)) return undefined;
      const e = byId.get(pkgId);
      return e && toPkg(distId, e, meta);
    },
    resolveVersion: (name, arch) => {
      const e = current.get(packageKey(name, arch));
      return e && formatVersion({ epoch: e.epoch, upstream: e.version, revision: e.release });
    },
  };
}
