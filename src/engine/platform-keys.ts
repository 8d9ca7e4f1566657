// Keys of the platform tool's (hammr) template format that this project reads but does not act on:
// named as such, so that a user migrating a file learns what will not happen, instead of a bare
// "unknown field". Sources: hammr's own template and bundle examples (templateFull.json, bundleFull.json).
import { closest, distance } from 'fastest-levenshtein';

/** By the place of the map (`[n]` indices written `[]`), then by key: what the key does on the platform. */
const PLATFORM_ONLY: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  stack: { config: 'configuration scripts', source_logo: 'the template logo' },
  'stack.installation': { partitioning: 'custom disk partitioning', internetSettings: 'network settings', displayLicenses: 'licence display at first boot' },
  'stack.bundles[]': { destination: 'a bundle-wide destination: give each file its destination', restrictionRule: 'OS restriction rules' },
  'stack.bundles[].files[]': {
    tag: 'file tags (ospkg, bootscript, softwarefile)', symlink: 'symbolic links', install: 'OS package files installed at build',
    bootOrder: 'boot scripts', bootType: 'boot scripts', files: 'folders of files',
  },
};

/** What the platform does with `key` at `what`, when this project does not support it. */
export function platformOnlyKey(what: string, key: string): string | undefined {
  const table = PLATFORM_ONLY[what.replace(/\[\d+\]/g, '[]')];
  return table && Object.prototype.hasOwnProperty.call(table, key) ? table[key] : undefined;
}

/** The known key a typo most likely meant (`versoin` → `version`): at most 2 edits, and fewer than half the key. */
export function nearMiss(key: string, known: readonly string[]): string | undefined {
  if (known.length === 0) return undefined;
  const lower = key.toLowerCase();
  const best = closest(lower, known.map((k) => k.toLowerCase()));
  const d = distance(lower, best);
  return d <= 2 && d * 2 < key.length ? known.find((k) => k.toLowerCase() === best) : undefined;
}
