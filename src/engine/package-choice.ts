// Package resolution, one recipe for the engine (declarations) and the provider (Pulumi inputs): the
// same names give the same packages whichever tool asks.
import type { Client } from '../client';
import { fiql } from '../fiql/builder';
import type { Pkg } from '../model/resources';
import { DEFAULT_PLATFORM } from '../model/platforms';

/** A package as a user names it: a name, optionally narrowed by version, Debian revision and arch. */
export interface PackageWanted {
  readonly name: string;
  readonly version?: string | undefined;
  readonly release?: string | undefined;
  readonly arch?: string | undefined;
}

/** `nginx 1.22.1 9 amd64`: the wanted package as messages show it. */
export function wantedLabel(w: PackageWanted): string {
  return [w.name, w.version, w.release, w.arch].filter(Boolean).join(' ');
}

/**
 * The package the service offers for `w` in distribution `distId`, or undefined. Only the latest
 * versions are searched unless a version is named (a pinned older version must stay findable).
 */
export async function findPackage(client: Client, distId: string, w: PackageWanted, signal?: AbortSignal): Promise<Pkg | undefined> {
  const query = fiql.and(
    fiql.eq('name', w.name),
    w.version !== undefined && fiql.eq('version', w.version),
    w.release !== undefined && fiql.eq('release', w.release),
    w.arch !== undefined && fiql.eq('arch', w.arch),
  );
  const r = await client.osPkg_getAll({ id: distId, params: { query, latestOnly: w.version === undefined }, ...(signal ? { signal } : {}) });
  return choosePackage(w, r.pkgs ?? []);
}

/**
 * Of several matches (arches, versions), the one named exactly (a FIQL `*` in a name matches others),
 * then the machine's own arch first, then `all`, then the newest build.
 */
export function choosePackage(w: PackageWanted, pkgs: readonly Pkg[]): Pkg | undefined {
  const archRank = (a: string | undefined) => (a === DEFAULT_PLATFORM.debianArch || a === DEFAULT_PLATFORM.name ? 0 : a === 'all' || a === 'noarch' ? 1 : 2);
  return pkgs
    .filter((p) => p.name === w.name && p.uri)
    .sort((a, b) => archRank(a.arch) - archRank(b.arch) || (b.pkgBuildDate ?? '').localeCompare(a.pkgBuildDate ?? '') || (b.dbId ?? 0) - (a.dbId ?? 0))[0];
}
