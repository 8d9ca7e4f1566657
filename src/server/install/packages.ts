// Package pins of an OS profile: a package follows the mirror's current version
// unless pinned to a full Debian version. Pins are set through `PUT …/osprofile/<osid>/pkgs` with
// `pkgs/pkg` entries; the generation job asks for `packageRequestsOf` (name, arch, version if pinned).
import { fiql } from '../../fiql/builder';
import { present } from '../../model/present';
import type { Pkg } from '../../model/resources';
import { parseUri } from '../../model/uris';
import type { Ctx } from '../context';
import type { PackageRequest } from '../../imaging';
import { badRequest } from '../service-error';
import type { OsProfileDoc } from '../store/docs';
import type { CatalogPort } from '../ports';
import { idParam, uris } from '../uris';

/** Debian policy §5.6.12: `[epoch:]upstream[-revision]`, upstream starting with a digit. */
const DEBIAN_VERSION = /^(?:\d{1,9}:)?[0-9][A-Za-z0-9.+~-]*$/;
const REVISION = /^[A-Za-z0-9.+~]+$/;

/** The full version a `pkg` entry pins: `epoch:version-release` from its parts; undefined: unpin. */
export function pinOf(e: Pkg, path: string): string | undefined {
  if (e.version === undefined && e.release === undefined && e.epoch === undefined) return undefined;
  if (e.version === undefined || e.version === '') throw badRequest(`${path}.version is required to pin a package (with release and epoch when the version has them)`);
  if (e.epoch !== undefined && (!Number.isSafeInteger(e.epoch) || e.epoch < 0)) throw badRequest(`${path}.epoch must be a whole number`);
  if (e.release !== undefined && !REVISION.test(e.release)) throw badRequest(`${path}.release ${JSON.stringify(e.release.slice(0, 40))} is not a Debian revision`);
  const full = `${e.epoch ? `${e.epoch}:` : ''}${e.version}${e.release !== undefined ? `-${e.release}` : ''}`;
  if (full.length > 128 || !DEBIAN_VERSION.test(full) || (e.epoch === undefined && e.version.includes(':'))) {
    throw badRequest(`${path}.version ${JSON.stringify(full.slice(0, 60))} is not a Debian version ([epoch:]upstream[-revision])`);
  }
  return full;
}

/** A catalog record shown at its pinned version (epoch, upstream and revision split back). */
export function pinnedView(p: Pkg, pin: string | undefined): Pkg {
  if (pin === undefined) return p;
  const colon = pin.indexOf(':');
  const epoch = colon >= 0 ? Number(pin.slice(0, colon)) : 0;
  const rest = colon >= 0 ? pin.slice(colon + 1) : pin;
  const dash = rest.lastIndexOf('-');
  return { ...p, version: dash >= 0 ? rest.slice(0, dash) : rest, release: dash >= 0 ? rest.slice(dash + 1) : undefined, epoch };
}

/** The catalog package a `pkg` entry names: by `uri`, else by `name` (and `arch`). */
export function packageOfEntry(ctx: Ctx, distId: number, e: Pkg, path: string): Pkg {
  if (e.uri !== undefined) {
    const named = parseUri(e.uri, ['osPkg_get'])?.params;
    const p = named && idParam(named.id) === distId ? ctx.catalog.getPackage(distId, idParam(named.pid)) : undefined;
    if (!p) throw badRequest(`${path}.uri ${JSON.stringify(e.uri.slice(0, 80))} names no package of ${uris.distribution(distId)}`);
    return p;
  }
  if (!e.name) throw badRequest(`${path} needs uri, or name (and arch)`);
  const query = e.arch ? fiql.and(fiql.eq('name', e.name), fiql.eq('arch', e.arch)) : fiql.eq('name', e.name);
  const found = ctx.catalog.searchPackages(distId, { query, latestOnly: true }).items;
  if (found.length === 0) throw badRequest(`${path}: no package ${JSON.stringify(e.name.slice(0, 80))}${e.arch ? ` for ${e.arch}` : ''} in ${uris.distribution(distId)}`);
  if (found.length > 1) throw badRequest(`${path}: ${JSON.stringify(e.name)} exists for several architectures (${found.map((p) => p.arch).join(', ')}): give arch`);
  return found[0]!;
}

/**
 * What the generation job installs beyond the base profile: the template's added packages, and every
 * pinned one (a pin of a base package must be asked for to be honoured), with `version` only when
 * pinned; `arch` is left out for `all` packages. `profile` is the base profile's name.
 */
export function packageRequestsOf(catalog: CatalogPort, d: OsProfileDoc): { profile: string; packages: PackageRequest[] } {
  const base = catalog.profiles(d.distId).find((p) => p.dbId === d.profileId);
  const inBase = new Set(catalog.profilePackages(d.distId, d.profileId).map((p) => p.dbId));
  const packages = d.pkgIds.flatMap((id): PackageRequest[] => {
    const pin = d.pins?.[String(id)];
    if (inBase.has(id) && pin === undefined) return [];
    const p = catalog.getPackage(d.distId, id);
    if (!p?.name) return [];
    return [present({ name: p.name, arch: p.arch === 'all' ? undefined : p.arch || undefined, version: pin })];
  });
  return { profile: base?.name ?? d.name, packages };
}
