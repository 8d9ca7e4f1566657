// Debian version order, as dpkg implements it (lib/dpkg/version.c, Debian Policy §5.6.12):
// `[epoch:]upstream[-revision]`, compared epoch first, then upstream, then revision.

export interface DebianVersion {
  readonly epoch: number;
  /** Upstream version, without epoch or revision. */
  readonly upstream: string;
  /** Debian revision (after the last hyphen); empty for a native package. */
  readonly revision: string;
}

/** Splits a version string: the epoch is before the first colon, the revision after the last hyphen. */
export function parseVersion(v: string): DebianVersion {
  const colon = v.indexOf(':');
  const epoch = colon > 0 ? Number(v.slice(0, colon)) : 0;
  const rest = colon > 0 ? v.slice(colon + 1) : v;
  const dash = rest.lastIndexOf('-');
  return dash > 0 ? { epoch, upstream: rest.slice(0, dash), revision: rest.slice(dash + 1) } : { epoch, upstream: rest, revision: '' };
}

/** `[epoch:]upstream[-revision]`, with the epoch left out when it is 0 (as the index writes it). */
export function formatVersion(v: DebianVersion): string {
  return `${v.epoch ? `${v.epoch}:` : ''}${v.upstream}${v.revision ? `-${v.revision}` : ''}`;
}

/** Negative, zero or positive as `a` sorts before, with or after `b` in dpkg's order. */
export function compareVersions(a: string | DebianVersion, b: string | DebianVersion): number {
  const x = typeof a === 'string' ? parseVersion(a) : a;
  const y = typeof b === 'string' ? parseVersion(b) : b;
  return Math.sign(x.epoch - y.epoch || verrevcmp(x.upstream, y.upstream) || verrevcmp(x.revision, y.revision));
}

const isDigit = (c: number): boolean => c >= 48 && c <= 57;

/** dpkg's `order()`: `~` sorts before everything (even the end), letters before other characters. */
function order(c: number): number {
  if (Number.isNaN(c) || isDigit(c)) return 0;
  if (c === 126) return -1;
  if ((c >= 65 && c <= 90) || (c >= 97 && c <= 122)) return c;
  return c + 256;
}

/** dpkg's `verrevcmp()`: alternating non-digit runs (by `order`) and digit runs (by value). */
function verrevcmp(a: string, b: string): number {
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    let firstDiff = 0;
    while ((i < a.length && !isDigit(a.charCodeAt(i))) || (j < b.length && !isDigit(b.charCodeAt(j)))) {
      const ac = order(a.charCodeAt(i));
      const bc = order(b.charCodeAt(j));
      if (ac !== bc) return ac - bc;
      i++;
      j++;
    }
    while (a.charCodeAt(i) === 48) i++;
    while (b.charCodeAt(j) === 48) j++;
    while (isDigit(a.charCodeAt(i)) && isDigit(b.charCodeAt(j))) {
      if (!firstDiff) firstDiff = a.charCodeAt(i) - b.charCodeAt(j);
      i++;
      j++;
    }
    if (isDigit(a.charCodeAt(i))) return 1;
    if (isDigit(b.charCodeAt(j))) return -1;
    if (firstDiff) return firstDiff;
  }
  return 0;
}
