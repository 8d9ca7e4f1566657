// The catalog a running server answers from, per release: the cached refresh in `<data dir>/catalog/` if
// there is a readable one, else the shipped data file; then, in the background, a refresh from the mirror
// the server installs from (one release after the other), swapped in when it is complete. A failed
// refresh is logged and changes nothing.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createCatalog, joinCatalogs, type Catalog } from './index';
import { defaultDataFile } from './data-file';
import { builtIndexDir, CATALOG_DIR, indexedCatalog, startIndexDir } from './start-index';
import { rebuildCatalog, type RebuildSummary } from './refresh';
import { messageOf } from '../../errors';
import { OS_RELEASES, releaseLabel, type OsRelease } from '../../model/releases';
import { openDataFolder, realFolder } from '../data-folder';

export { CATALOG_DIR } from './start-index';

export interface LiveCatalogOptions {
  readonly dataDir: string;
  /** false: no refresh (offline use); otherwise the mirror of the image builds. */
  readonly refresh: false | { readonly mirror?: string; /** false: the mirror has no security suite (as `serve --security-mirror none`). */
  readonly securityMirror?: string | false; readonly keyring?: string };
  /** Where InRelease and Packages are kept between refreshes; default `<data dir>/catalog/index`. */
  readonly indexCacheDir?: string;
  /** The first release's (Debian 12) shipped file; default: `defaultDataFile()`. */
  readonly shippedFile?: string;
  readonly log?: (msg: string) => void;
}

export type RefreshOutcome = { readonly ok: true; readonly summary: RebuildSummary } | { readonly ok: false; readonly error: Error } | { readonly ok: false; readonly skipped: true };

export interface LiveCatalog extends Catalog {
  /** Settles when the background refresh of every release has ended, with each one's outcome by codename (never rejects). */
  readonly refreshed: Promise<Readonly<Record<string, RefreshOutcome>>>;
  /** Stops a refresh under way (server shutdown). */
  close(): Promise<void>;
}

export function openLiveCatalog(o: LiveCatalogOptions): LiveCatalog {
  const log = o.log ?? (() => undefined);
  // The data folder first (checked as the server checks it): a first start writes the start index there.
  const dataDir = openDataFolder(o.dataDir);
  const dir = join(dataDir, CATALOG_DIR);
  const indexDir = o.indexCacheDir ?? join(dir, 'index');
  // The refresh writes there: real folders of this user only (data-folder.ts).
  for (const d of [dir, indexDir]) realFolder(d);
  const abort = new AbortController();
  const parts = OS_RELEASES.map((r) => livePart(r, o, dataDir, indexDir, abort.signal, log));
  const refreshed = (async () => {
    const out: Record<string, RefreshOutcome> = {};
    // One release after the other: one merged index in memory at a time. Each waits a turn of the event
    // loop first: `serve` finishes starting (the refresh never delays readiness), and reading one
    // release's new file and the next one's previous file never block the loop together.
    for (const p of parts) {
      await new Promise((r) => setImmediate(r));
      out[p.release.codename] = await p.refresh();
    }
    return out;
  })();
  // The joined catalog's own getters and methods, plus the refresh's (a prototype: no list of them to keep twice).
  return Object.assign(Object.create(joinCatalogs(parts.map((p) => p.catalog))) as Catalog, {
    refreshed,
    close: async () => {
      abort.abort();
      await refreshed;
    },
  });
}

/** The cached file of a release in the catalog folder. */
export const cachedCatalogFile = (catalogDir: string, r: OsRelease): string => join(catalogDir, r.catalogFile);

function livePart(release: OsRelease, o: LiveCatalogOptions, dataDir: string, indexDir: string, signal: AbortSignal, log: (msg: string) => void) {
  const dir = join(dataDir, CATALOG_DIR);
  const first = release === OS_RELEASES[0];
  const cached = cachedCatalogFile(dir, release);
  const shipped = (first ? o.shippedFile : undefined) ?? defaultDataFile(release);
  // A file named by APPLIANCE_FORGE_CATALOG is the catalog as it is: no cache, no refresh.
  const fixed = first && process.env.APPLIANCE_FORGE_CATALOG !== undefined && o.shippedFile === undefined;
  let cur = fixed ? { file: shipped, catalog: createCatalog(shipped, release) } : load(cached, shipped, release, startIndexDir(dataDir), log);
  const current = () => cur.catalog;
  const catalog: Catalog = {
    get meta() { return current().meta; },
    get distributions() { return current().distributions; },
    getDistribution: (distId) => current().getDistribution(distId),
    profiles: (distId) => current().profiles(distId),
    getProfile: (distId, pid) => current().getProfile(distId, pid),
    profilePackages: (distId, pid) => current().profilePackages(distId, pid),
    searchPackages: (distId, opts) => current().searchPackages(distId, opts),
    packageCursor: (distId, opts) => current().packageCursor(distId, opts),
    getPackage: (distId, pkgId) => current().getPackage(distId, pkgId),
    resolveVersion: (distId, name, arch) => current().resolveVersion(distId, name, arch),
  };
  const refresh = async (): Promise<RefreshOutcome> => {
    if (o.refresh === false || fixed || signal.aborted) return { ok: false, skipped: true } as const;
    const { mirror, securityMirror, keyring } = o.refresh;
    try {
      const summary = await rebuildCatalog(
        { cacheDir: indexDir, signal, ...(mirror ? { mirror } : {}), ...(securityMirror !== undefined ? { securityMirror } : {}), ...(keyring ? { keyring } : {}) },
        cur.file,
        cached,
        release,
      );
      cur = { file: cached, catalog: createCatalog(cached, release) };
      log(`catalog of ${releaseLabel(release)} refreshed from ${mirror ?? 'the default mirror'}: ${summary.count} packages (${summary.added} new ids, ${summary.retired} retired), index date ${summary.date}`);
      return { ok: true, summary } as const;
    } catch (e) {
      const error = e as Error;
      log(`catalog refresh of ${releaseLabel(release)} failed, keeping ${cur.file}: ${error.message}`);
      return { ok: false, error } as const;
    }
  };
  return { release, catalog, refresh };
}

/**
 * The cached refresh when it reads (its ids continue those the server's records already point to), else
 * the shipped file through the start index (never rewritten in place, unlike the refresh's file).
 */
function load(cached: string, shipped: string, release: OsRelease, indexDir: string, log: (msg: string) => void): { file: string; catalog: Catalog } {
  if (existsSync(cached)) {
    try {
      return { file: cached, catalog: createCatalog(cached, release) };
    } catch (e) {
      log(`cached catalog ${cached} unreadable, using the shipped one: ${messageOf(e)}`);
    }
  }
  return { file: shipped, catalog: indexedCatalog(indexDir, shipped, release, builtIndexDir()) };
}
