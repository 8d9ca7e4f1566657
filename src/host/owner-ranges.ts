// A subordinate id range for each owner of a shared server's builds, picked the way
// `systemd-nspawn --private-users=pick` picks one: a first candidate from a hash of the owner's name,
// then the next free one, each claimed by a file created exclusively in a registry folder of /run
// (cleared at boot, when no build's files are left). The pool is a root entry of /etc/subuid and
// /etc/subgid beyond the builds' own range (scripts/prereqs.sh adds one of 256 ranges), so two
// owners' builds never share a host id: one build's tools cannot touch another owner's trees.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { MAPPED_IDS, type Sandbox } from './sandbox';

/** Where the claims live: tmpfs, root's only. */
export const RANGE_REGISTRY = '/run/appliance-forge/owner-ranges';

/** At least this many ranges make a pool (a smaller second entry is some other use of the ids). */
export const MIN_POOL_RANGES = 16;

export interface RangePool {
  /** First host uid and gid of the pool (the files may put them apart). */
  readonly uidBase: number;
  readonly gidBase: number;
  /** How many ranges of MAPPED_IDS ids it holds. */
  readonly ranges: number;
}

/** The largest entry of an /etc/subuid-style text for `names` with at least MIN_POOL_RANGES ranges, not starting at `except`. */
function poolEntry(text: string, names: readonly string[], except: number): { base: number; ranges: number } | undefined {
  let best: { base: number; ranges: number } | undefined;
  for (const line of text.split('\n')) {
    const [who, start, count] = line.trim().split(':');
    if (who === undefined || !names.includes(who)) continue;
    const base = Number(start);
    const ranges = Math.floor(Number(count) / MAPPED_IDS);
    if (!Number.isSafeInteger(base) || base <= 0 || base === except || !(ranges >= MIN_POOL_RANGES)) continue;
    if (best === undefined || ranges > best.ranges) best = { base, ranges };
  }
  return best;
}

/** The owners' pool in the texts of /etc/subuid and /etc/subgid, apart from the builds' own range; undefined without one. */
export function rangePool(subuid: string, subgid: string, names: readonly string[], own: { uidBase: number; gidBase: number }): RangePool | undefined {
  const u = poolEntry(subuid, names, own.uidBase);
  const g = poolEntry(subgid, names, own.gidBase);
  if (u === undefined || g === undefined) return undefined;
  return { uidBase: u.base, gidBase: g.base, ranges: Math.min(u.ranges, g.ranges) };
}

/** The first candidate of an owner: a hash, so that an owner tends to keep its range from one boot to the next. */
function firstCandidate(owner: string, ranges: number): number {
  return createHash('sha256').update(owner).digest().readUInt32BE(0) % ranges;
}

/**
 * The index of the owner's range in the pool: its claim in the registry, or the first free one from its
 * hash, claimed now. Every process of the host reads the same registry, so a second server (a farm's
 * worker beside an API node) gives an owner the same range.
 */
export function pickRange(owner: string, pool: RangePool, registry = RANGE_REGISTRY): number {
  mkdirSync(registry, { recursive: true, mode: 0o700 });
  const start = firstCandidate(owner, pool.ranges);
  for (let i = 0; i < pool.ranges; i++) {
    const slot = (start + i) % pool.ranges;
    const claim = join(registry, String(slot));
    try {
      writeFileSync(claim, owner, { flag: 'wx', mode: 0o600 });
      return slot;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      if (readFileSync(claim, 'utf8') === owner) return slot;
    }
  }
  throw new Error(`no free subordinate id range for another owner: all ${pool.ranges} of the pool are taken (add ranges to root's entry in /etc/subuid and /etc/subgid)`);
}

function readOr(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

/** The pool of a root server's sandbox, from /etc/subuid and /etc/subgid; undefined for any other sandbox or without one. */
export function poolOf(s: Sandbox): RangePool | undefined {
  if (s.kind !== 'userns' || s.self) return undefined;
  const names = [userInfo().username, String(process.getuid?.() ?? '')];
  return rangePool(readOr('/etc/subuid'), readOr('/etc/subgid'), names, s);
}

/** The sandbox of one owner's builds: the server's, in the owner's range of the pool. */
export function ownerSandbox(pool: RangePool, slot: number): Extract<Sandbox, { kind: 'userns' }> {
  const uidBase = pool.uidBase + slot * MAPPED_IDS;
  const gidBase = pool.gidBase + slot * MAPPED_IDS;
  return {
    kind: 'userns', self: false, uid0: uidBase, gid0: gidBase, uidBase, gidBase,
    reason: `an owner's builds: image tools run as root of a user namespace of its own range (host ids ${uidBase}…${uidBase + MAPPED_IDS - 1})`,
  };
}

/** Which range of the pool a host uid is in; undefined outside it. */
export function slotOfUid(pool: RangePool, uid: number): number | undefined {
  const slot = Math.floor((uid - pool.uidBase) / MAPPED_IDS);
  return uid >= pool.uidBase && slot < pool.ranges ? slot : undefined;
}
