// A subordinate id range for each owner of a shared server's builds, picked the way
// `systemd-nspawn --private-users=pick` picks one: a first candidate from a hash of the owner's name,
// then the next free one, claimed in a registry folder of /run (cleared at boot) and held by a lease
// of each running build, so that a range no build holds can serve another owner. The pool is a root entry of /etc/subuid and
// /etc/subgid beyond the builds' own range (scripts/prereqs.sh adds one of 256 ranges), so two
// owners' builds never share a host id: one build's tools cannot touch another owner's trees.
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ownerAlive, processOwner } from './process-owner';
import { MAPPED_IDS, subordinateEntries, subordinateFiles, type Sandbox } from './sandbox';

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
  for (const { start, count } of subordinateEntries(text, names)) {
    const ranges = Math.floor(count / MAPPED_IDS);
    if (start === except || ranges < MIN_POOL_RANGES) continue;
    if (best === undefined || ranges > best.ranges) best = { base: start, ranges };
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

/** The first candidate of an owner: a hash, so that an owner tends to find its range again. */
function firstCandidate(owner: string, ranges: number): number {
  return createHash('sha256').update(owner).digest().readUInt32BE(0) % ranges;
}

/** An owner's hold on its range while one of its builds runs; the range may go to another owner once none does. */
export interface RangeLease {
  readonly slot: number;
  release(): Promise<void>;
}

let leases = 0;

/** What a range's folder in the registry says: its owner, and whether a running process still holds it. */
async function claimOf(dir: string): Promise<{ owner: string; held: boolean } | undefined> {
  const owner = await readFile(join(dir, 'owner'), 'utf8').catch(() => undefined);
  if (owner === undefined) return undefined;
  const held = (await readdir(join(dir, 'leases')).catch(() => [] as string[])).some(ownerAlive);
  return { owner, held };
}

/**
 * The owner's range for one build: the range it holds or held last, else the first never claimed from its
 * hash on, else the first that no running process holds (its last owner's builds are over; their files went
 * with them). The registry's lock makes the choice one at a time across the host's processes, so a farm's
 * workers on one machine agree, and a lease of a dead process does not hold a range.
 */
export async function leaseRange(owner: string, pool: RangePool, registry = RANGE_REGISTRY): Promise<RangeLease> {
  await mkdir(registry, { recursive: true, mode: 0o700 });
  const { default: lockfile } = await import('proper-lockfile');
  const unlock = await lockfile.lock(registry, { realpath: false, stale: 10_000, retries: { retries: 100, minTimeout: 10, maxTimeout: 200 } });
  try {
    const start = firstCandidate(owner, pool.ranges);
    const order = Array.from({ length: pool.ranges }, (_, i) => (start + i) % pool.ranges);
    const claims = await Promise.all(order.map((slot) => claimOf(join(registry, String(slot)))));
    const at = (i: number): number => order[i]!;
    const mine = claims.findIndex((c) => c?.owner === owner);
    const unclaimed = claims.findIndex((c) => c === undefined);
    const idle = claims.findIndex((c) => c !== undefined && !c.held);
    const i = mine >= 0 ? mine : unclaimed >= 0 ? unclaimed : idle;
    if (i < 0) throw new Error(`no free subordinate id range for another owner: all ${pool.ranges} of the pool are in use by running builds (add ranges to root's entry in /etc/subuid and /etc/subgid)`);
    const dir = join(registry, String(at(i)));
    if (i !== mine) {
      await rm(dir, { recursive: true, force: true });
      await mkdir(join(dir, 'leases'), { recursive: true });
      await writeFile(join(dir, 'owner'), owner);
    }
    const lease = join(dir, 'leases', `${processOwner()}-${++leases}`);
    await writeFile(lease, '');
    return { slot: at(i), release: () => unlink(lease).catch(() => undefined) };
  } finally {
    await unlock();
  }
}

/** The pool of a root server's sandbox, from /etc/subuid and /etc/subgid; undefined for any other sandbox or without one. */
export function poolOf(s: Sandbox): RangePool | undefined {
  if (s.kind !== 'userns' || s.self) return undefined;
  const { names, subuid, subgid } = subordinateFiles();
  return rangePool(subuid, subgid, names, s);
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
