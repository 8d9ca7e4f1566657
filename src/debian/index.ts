// The Debian package index of a release: its suites (release, updates, security) read and merged,
// keeping for each (name, arch) the highest version in dpkg's order.
import { DebianIndexError } from './errors';
import { readStanzas, type IndexPackage } from './stanzas';
import { closed, type SuiteIndex, type SuiteSource } from './suite';
import { compareVersions } from './version';
import { packageKey } from './package-key';
import type { ReleaseFile } from './release';
import { DEBIAN_ARCHIVE, type OsRelease } from '../model/releases';

export { DebianIndexError, type DebianIndexFault } from './errors';
export { DEBIAN_KEYRING, type ReleaseFile } from './release';
export type { IndexPackage } from './stanzas';
export { aptListsSuite, fetchSuite, type FetchSuiteOptions, type SuiteIndex, type SuiteSource } from './suite';
export { compareVersions, formatVersion, parseVersion, type DebianVersion } from './version';

export const DEFAULT_MIRROR = DEBIAN_ARCHIVE.mirror;
export const DEFAULT_SECURITY_MIRROR = DEBIAN_ARCHIVE.securityMirror;

/** The suites a stable system of `release` installs from (the release first); `securityMirror` false: no security suite. */
export function releaseSuites(release: OsRelease, mirror = release.archive.mirror, securityMirror: string | false = release.archive.securityMirror): SuiteSource[] {
  return [
    ...release.suites.archive.map((suite) => ({ mirror, suite })),
    ...(securityMirror === false ? [] : [{ mirror: securityMirror, suite: release.suites.security }]),
  ];
}

export interface MergedIndex {
  /** The releases read, in the order given (the first is the release itself). */
  readonly releases: readonly ReleaseFile[];
  readonly sources: readonly string[];
  /** The current version of each package, by `name\tarch`. */
  readonly packages: ReadonlyMap<string, IndexPackage>;
}

export { packageKey } from './package-key';

/** Reads the suites one after the other: only the current version of each package is held. */
export async function mergeSuites(suites: readonly SuiteIndex[]): Promise<MergedIndex> {
  if (suites.length === 0) throw new DebianIndexError('malformed', 'no suite to read');
  const packages = new Map<string, IndexPackage>();
  for (const s of suites) {
    const text = s.open();
    try {
      await readStanzas(text, (p) => {
        const key = packageKey(p.name, p.arch);
        const have = packages.get(key);
        if (!have || compareVersions(p.version, have.version) > 0) packages.set(key, p);
      });
      await closed(text);
    } catch (e) {
      // Stops the decompressing tool too (its pipe closes), so nothing is left running.
      text.destroy();
      throw e;
    }
  }
  return { releases: suites.map((s) => s.release), sources: suites.map((s) => s.source), packages };
}
