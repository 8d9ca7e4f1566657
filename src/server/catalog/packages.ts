// Package records (wire contract §7, §10): the model `Pkg` of a catalog row, and the FIQL selectors
// a package search offers.
import { createHash } from 'node:crypto';
import type { Selectors } from '../../fiql';
import type { Pkg } from '../../model/resources';
import { uris } from '../uris';
import type { CatalogMeta, PackageEntry } from './data-file';

/** The only repository of the catalog: Debian's `main` component. */
export const REPOSITORY_NAME = 'main';

/** Digests by row, made once: a row belongs to one catalog (one `meta`) and never changes. */
const digests = new WeakMap<PackageEntry, string>();

/**
 * The model record of a row. `pkgBuildDate` is the Release file's `Date` for every package: Packages
 * files carry no build date. `release` is left out for a native package (no Debian revision).
 */
export function toPkg(distId: number, e: PackageEntry, meta: CatalogMeta): Pkg {
  let digest = digests.get(e);
  if (digest === undefined) {
    digest = createHash('sha1')
      .update(`${meta.digest}\t${e.id}\t${e.name}\t${e.epoch}\t${e.version}\t${e.release}\t${e.arch}\t${e.size}`)
      .digest('hex');
    digests.set(e, digest);
  }
  const p: Pkg = {
    created: meta.date,
    dbId: e.id,
    digest,
    lastModified: meta.date,
    size: e.size,
    arch: e.arch,
    fullName: e.fullName,
    name: e.name,
    pkgBuildDate: meta.date,
    repositoryName: REPOSITORY_NAME,
    uri: uris.pkg(distId, e.id),
    version: e.version,
    epoch: e.epoch,
  };
  if (e.release !== '') p.release = e.release;
  return p;
}

/**
 * Search selectors: those of the Catalog contract plus `priority`, `section` and `installedSize` (KiB),
 * which the index has and the Pkg record does not carry. `version` compares as text.
 */
export function packageSelectors(meta: CatalogMeta): Selectors<PackageEntry> {
  const built = Date.parse(meta.date);
  return {
    dbId: { type: 'number', get: (e) => e.id },
    name: { type: 'string', get: (e) => e.name },
    version: { type: 'string', get: (e) => e.version },
    release: { type: 'string', get: (e) => e.release },
    arch: { type: 'string', get: (e) => e.arch },
    epoch: { type: 'number', get: (e) => e.epoch },
    size: { type: 'number', get: (e) => e.size },
    fullName: { type: 'string', get: (e) => e.fullName },
    repositoryName: { type: 'string', get: () => REPOSITORY_NAME },
    pkgBuildDate: { type: 'date', get: () => built },
    priority: { type: 'string', get: (e) => e.priority },
    section: { type: 'string', get: (e) => e.section },
    installedSize: { type: 'number', get: (e) => e.installedSize },
  };
}
