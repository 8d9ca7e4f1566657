// The catalog a running server answers from: the cached refresh in `<data dir>/catalog/` if there is a
// readable one, else the shipped data file; then, in the background, a refresh from the mirror the
// server installs from, swapped in when it is complete. A failed refresh is logged and changes nothing.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createCatalog, type Catalog } from './index';
import { defaultDataFile } from './data-file';
import { CATALOG_DIR } from './start-index';
import { rebuildCatalog, type RebuildSummary } from './refresh';
import { messageOf } from '../../errors';
import { realFolder } from '../data-folder';

export { CATALOG_DIR } from './start-index';
export const CACHED_CATALOG = 'debian-12-amd64.tsv.gz';

export interface LiveCatalogOptions {
  readonly dataDir: string;
  /** false: no refresh (offline use); otherwise the mirror of the image builds. */
  readonly refresh: false | { readonly mirror?: string; /** false: the mirror has no security suite (as `serve --security-mirror none`). */
  readonly securityMirror?: string | false; readonly keyring?: string };
  /** Where InRelease and Packages are kept between refreshes; default `<data dir>/catalog/index`. */
  readonly indexCacheDir?: string;
  /** Default: `defaultDataFile()`. */
  readonly shippedFile?: string;
  readonly log?: (msg: string) => void;
}

export type RefreshOutcome = { readonly ok: true; readonly summary: RebuildSummary } | { readonly ok: false; readonly error: Error } | { readonly ok: false; readonly skipped: true };

export interface LiveCatalog extends Catalog {
  /** Settles when the background refresh has ended (never rejects). */
  readonly refreshed: Promise<RefreshOutcome>;
  /** Stops a refresh under way (server shutdown). */
  close(): Promise<void>;
}

export function openLiveCatalog(o: LiveCatalogOptions): LiveCatalog {
  const log = o.log ?? (() => undefined);
  const dir = join(resolve(o.dataDir), CATALOG_DIR);
  const cached = join(dir, CACHED_CATALOG);
  const indexDir = o.indexCacheDir ?? join(dir, 'index');
  // The refresh writes there: real folders of this user only (data-folder.ts).
  for (const d of [dir, indexDir]) realFolder(d);
  // A file named by APPLIANCE_FORGE_CATALOG is the catalog as it is: no cache, no refresh.
  const fixed = process.env.APPLIANCE_FORGE_CATALOG !== undefined && o.shippedFile === undefined;
  let cur = fixed ? { file: defaultDataFile(), catalog: createCatalog(defaultDataFile()) } : load(cached, o.shippedFile ?? defaultDataFile(), log);
  const abort = new AbortController();

  const refreshed: Promise<RefreshOutcome> = (async () => {
    if (o.refresh === false || fixed) return { ok: false, skipped: true } as const;
    const { mirror, securityMirror, keyring } = o.refresh;
    // Let `serve` finish starting first: the refresh never delays readiness.
    await new Promise((r) => setImmediate(r));
    try {
      const summary = await rebuildCatalog(
        { cacheDir: indexDir, signal: abort.signal, ...(mirror ? { mirror } : {}), ...(securityMirror !== undefined ? { securityMirror } : {}), ...(keyring ? { keyring } : {}) },
        cur.file,
        cached,
      );
      cur = { file: cached, catalog: createCatalog(cached) };
      log(`catalog refreshed from ${mirror ?? 'the default mirror'}: ${summary.count} packages (${summary.added} new ids, ${summary.retired} retired), index date ${summary.date}`);
      return { ok: true, summary } as const;
    } catch (e) {
      const error = e as Error;
      log(`catalog refresh failed, keeping ${cur.file}: ${error.message}`);
      return { ok: false, error } as const;
    }
  })();

  return {
    get meta() { return cur.catalog.meta; },
    get distributions() { return cur.catalog.distributions; },
    getDistribution: (distId) => cur.catalog.getDistribution(distId),
    profiles: (distId) => cur.catalog.profiles(distId),
    getProfile: (distId, pid) => cur.catalog.getProfile(distId, pid),
    profilePackages: (distId, pid) => cur.catalog.profilePackages(distId, pid),
    searchPackages: (distId, opts) => cur.catalog.searchPackages(distId, opts),
    packageCursor: (distId, opts) => cur.catalog.packageCursor(distId, opts),
    getPackage: (distId, pkgId) => cur.catalog.getPackage(distId, pkgId),
    resolveVersion: (name, arch) => cur.catalog.resolveVersion(name, arch),
    refreshed,
    close: async () => {
      abort.abort();
      await refreshed;
    },
  };
}

/**
 * The cached refresh when it reads (its ids continue those the server's records already point to), else
 * the shipped file.
 */
function load(cached: string, shipped: string, log: (msg: string) => void): { file: string; catalog: Catalog } {
  if (existsSync(cached)) {
    try {
      return { file: cached, catalog: createCatalog(cached) };
    } catch (e) {
      log(`cached catalog ${cached} unreadable, using the shipped one: ${messageOf(e)}`);
    }
  }
  return { file: shipped, catalog: createCatalog(shipped) };
}
