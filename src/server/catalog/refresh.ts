// Rebuilding the catalog from a Debian index: the mirror's own suites (what the server installs from)
// or apt's lists (what `apt-get update` fetched), keeping ids from the previous catalog.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  aptListsSuite, bookwormSuites, DebianIndexError, DEFAULT_MIRROR, DEFAULT_SECURITY_MIRROR, fetchSuite, mergeSuites,
  type MergedIndex, type SuiteIndex,
} from '../../imaging/debian';
import { buildCatalogText, gzipCatalog, writeCatalogFile } from './build';
import { readCatalogData } from './data-file';
import { defaultCacheDir } from '../../imaging/cache-dir';

export type IndexSource =
  | { readonly lists: string }
  | { readonly mirror?: string; readonly securityMirror?: string | false; readonly cacheDir: string; readonly keyring?: string; readonly signal?: AbortSignal };

const SUITES = ['bookworm', 'bookworm-updates', 'bookworm-security'];

/** The current version of every package of the source's bookworm suites (the release itself is required). */
export async function readIndex(src: IndexSource): Promise<MergedIndex> {
  const suites: SuiteIndex[] = [];
  if ('lists' in src) {
    const files = existsSync(src.lists) ? readdirSync(src.lists) : [];
    for (const name of SUITES) {
      const s = await aptListsSuite(src.lists, files, name);
      if (s) suites.push(s);
      else if (name === 'bookworm') throw new DebianIndexError('malformed', `no bookworm main binary-amd64 Packages or (In)Release file in ${src.lists}: run \`apt-get update\` first`);
    }
  } else {
    for (const s of bookwormSuites(src.mirror ?? DEFAULT_MIRROR, src.securityMirror ?? DEFAULT_SECURITY_MIRROR)) {
      suites.push(await fetchSuite(s, { cacheDir: src.cacheDir, ...(src.keyring ? { keyring: src.keyring } : {}), ...(src.signal ? { signal: src.signal } : {}) }));
    }
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

/** Writes a new catalog to `out` (atomically) from `src`, keeping the ids of `previous` (a catalog file) if given. */
export async function rebuildCatalog(src: IndexSource, previous: string | undefined, out: string): Promise<RebuildSummary> {
  // Read the previous catalog first: `out` may be the same file.
  const prev = previous ? readCatalogData(previous) : undefined;
  const index = await readIndex(src);
  const r = buildCatalogText(index, prev);
  const gz = await gzipCatalog(r.text);
  writeCatalogFile(out, gz);
  return { file: out, count: r.count, added: r.added, retired: r.retired, bytes: gz.length, date: index.releases.map((x) => x.date).sort().at(-1)! };
}
