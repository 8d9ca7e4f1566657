// Rebuilding the catalog from a Debian index: the mirror's own suites (what the server installs from)
// or apt's lists (what `apt-get update` fetched), keeping ids from the previous catalog.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  aptListsSuite, DebianIndexError, fetchSuite, mergeSuites, releaseSuites, type MergedIndex, type SuiteIndex,
} from '../../debian';
import { OS_RELEASES, type OsRelease } from '../../model/releases';

// What scripts/build-catalog.mjs takes from its bundle of this module besides the rebuild.
export { releaseNamed } from '../../model/releases';
export { dataFileOf } from './data-file';
import { buildCatalogText, gzipCatalog, writeCatalogFile } from './build';
import { readCatalogData } from './data-file';
import { defaultCacheDir } from '../../imaging';
import { DEFAULT_PLATFORM } from '../../model/platforms';

export type IndexSource =
  | { readonly lists: string }
  | { readonly mirror?: string; readonly securityMirror?: string | false; readonly cacheDir: string; readonly keyring?: string; readonly signal?: AbortSignal };

/** The current version of every package of the release's suites in the source (the release itself is required). */
export async function readIndex(src: IndexSource, release: OsRelease = OS_RELEASES[0]!): Promise<MergedIndex> {
  const suites: SuiteIndex[] = [];
  const all = releaseSuites(release, 'lists' in src ? undefined : src.mirror, 'lists' in src ? undefined : src.securityMirror);
  if ('lists' in src) {
    const files = existsSync(src.lists) ? readdirSync(src.lists) : [];
    for (const { suite } of all) {
      const s = await aptListsSuite(src.lists, files, suite);
      if (s) suites.push(s);
      else if (suite === release.codename) throw new DebianIndexError('malformed', `no ${suite} main binary-${DEFAULT_PLATFORM.debianArch} Packages or (In)Release file in ${src.lists}: run \`apt-get update\` first`);
    }
  } else {
    const keyring = src.keyring ?? release.archive.keyring;
    for (const s of all) suites.push(await fetchSuite(s, { cacheDir: src.cacheDir, keyring, ...(src.signal ? { signal: src.signal } : {}) }));
  }
  return mergeSuites(suites);
}

export interface RebuildSummary {
  readonly file: string;
  readonly count: number;
  /** Names that got a new id. */
  readonly added: number;
  /** Ids held for packages the index no longer has. */
  readonly retired: number;
  readonly bytes: number;
  readonly date: string;
}

/** The Debian index cache that `scripts/build-catalog.mjs --mirror` and the tests share: beside the OS layers. */
export function sharedIndexCacheDir(): string {
  return join(defaultCacheDir(), 'debian-index');
}

/**
 * Writes a new catalog of `release` (default: the first, Debian 12) to `out` (atomically) from `src`,
 * keeping the ids of `previous` (a catalog file) if given.
 */
export async function rebuildCatalog(src: IndexSource, previous: string | undefined, out: string, release: OsRelease = OS_RELEASES[0]!): Promise<RebuildSummary> {
  // Read the previous catalog first: `out` may be the same file.
  const prev = previous ? readCatalogData(previous) : undefined;
  const index = await readIndex(src, release);
  const r = buildCatalogText(index, prev);
  const gz = await gzipCatalog(r.text);
  writeCatalogFile(out, gz);
  return { file: out, count: r.count, added: r.added, retired: r.retired, bytes: gz.length, date: index.releases.map((x) => x.date).sort().at(-1)! };
}
