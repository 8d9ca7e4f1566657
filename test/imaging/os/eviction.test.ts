// LRU eviction by total size (layers, downloaded .deb files, trees being built), leases (in this
// process and in another one), the refusal of a build with no room, and the sweep of what a crashed
// build leaves (at server start too). Tiny fake entries (a meta.json declaring their size): a real
// build would add only minutes here, the eviction logic reads nothing else of an entry.
import { execFileSync } from 'node:child_process';
import { linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync, existsSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildHostOf } from '../../../src/imaging/build-host';
import { OsLayerCache } from '../../../src/imaging/os';
import { keepDeb } from '../../../src/imaging/os/debs';
import { mountsUnder } from '../../../src/imaging/os/mmdebstrap';
import { isImagingError } from '../../../src/imaging';
import { startServer } from '../../../src/server';
import { removeWorkerScript, scratch, spec, startWorker } from './helpers';

const root = scratch('evict');
afterAll(() => {
  root.cleanup();
  removeWorkerScript();
});

let n = 0;
function cacheWith(entries: { key: string; bytes: number; usedAt: number }[]): OsLayerCache {
  const dir = join(root.path, `c${n++}`);
  for (const e of entries) {
    const d = join(dir, 'layers', e.key);
    mkdirSync(join(d, 'tree', 'etc'), { recursive: true });
    writeFileSync(join(d, 'tree', 'etc', 'hostname'), 'fake\n');
    writeFileSync(join(d, 'meta.json'), JSON.stringify({ key: e.key, bytes: e.bytes, installed: [], canonical: {}, builtAt: new Date(e.usedAt).toISOString() }));
    writeFileSync(join(d, 'used'), '');
    utimesSync(join(d, 'used'), new Date(e.usedAt), new Date(e.usedAt));
  }
  return new OsLayerCache({ dir, maxBytes: 2500 });
}

const t0 = Date.parse('2026-01-01T00:00:00Z');
const three = () => [
  { key: 'a', bytes: 1000, usedAt: t0 },
  { key: 'b', bytes: 1000, usedAt: t0 + 1000 },
  { key: 'c', bytes: 1000, usedAt: t0 + 2000 },
];

describe('OS layer cache eviction', () => {
  it('removes the least recently used entries until the total fits', async () => {
    const cache = cacheWith(three());
    expect(await cache.evict()).toEqual(['a']);
    expect(await cache.keys()).toEqual(['b', 'c']);
    expect(await cache.evict()).toEqual([]);
  });

  it('a lease makes an entry recently used and keeps it while held', async () => {
    const cache = new OsLayerCache({ dir: cacheWith(three()).dir, maxBytes: 1500 });
    const a = await cache.lease('a');
    expect(a?.dir).toBe(join(cache.dir, 'layers', 'a', 'tree'));
    // a is leased (and now the most recent): b then c are the ones that go.
    expect(await cache.evict()).toEqual(['b', 'c']);
    expect(await cache.keys()).toEqual(['a']);
    await a!.release();
    await a!.release();
    expect(await new OsLayerCache({ dir: cache.dir, maxBytes: 500 }).evict()).toEqual(['a']);
    expect(readdirSync(join(cache.dir, 'tmp'))).toEqual([]);
  });

  it('respects a lease held by another process, until that process dies', async () => {
    const cache = cacheWith(three());
    const w = startWorker({ op: 'lease', cacheDir: cache.dir, key: 'a' });
    expect(await w.next()).toEqual({ leased: true });
    expect(await cache.evict()).toEqual(['b']);
    expect(await cache.keys()).toEqual(['a', 'c']);
    // Still leased: even a bound of 1 byte keeps it.
    const tiny = new OsLayerCache({ dir: cache.dir, maxBytes: 1 });
    expect(await tiny.evict()).toEqual(['c']);
    expect(await tiny.keys()).toEqual(['a']);
    // Killed without releasing: its lease is recognised as dead.
    w.child.kill('SIGKILL');
    await w.messages;
    expect(await tiny.evict()).toEqual(['a']);
    expect(await tiny.keys()).toEqual([]);
  });

  it('sweeps the temporary directories of dead processes at start, not those of live ones', async () => {
    const cache = cacheWith(three());
    const dead = join(cache.dir, 'tmp', '4194999.1-build-dead');
    const live = join(cache.dir, 'tmp', `${process.pid}.0-build-other`); // a wrong start time: a reused pid, dead
    mkdirSync(join(dead, 'tree', 'usr'), { recursive: true });
    mkdirSync(live, { recursive: true });
    const fresh = new OsLayerCache({ dir: cache.dir });
    await fresh.evict();
    expect(existsSync(dead)).toBe(false);
    expect(existsSync(live)).toBe(false);
    expect(await fresh.keys()).toEqual(['a', 'b', 'c']);
  });
});

/** This process's owner name in the cache (`<pid>.<start time>`): its directories count as live. */
function liveOwner(): string {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  return `${process.pid}.${stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]}`;
}

describe('OS layer cache bound: .deb files and builds in progress count', () => {
  it('evicts layers, then .deb files no build links, until layers + .deb files + trees being built fit', async () => {
    const cache = cacheWith([
      { key: 'a', bytes: 100_000, usedAt: t0 },
      { key: 'b', bytes: 100_000, usedAt: t0 + 1000 },
      { key: 'c', bytes: 100_000, usedAt: t0 + 2000 },
    ]);
    const debs = join(cache.dir, 'debs');
    mkdirSync(debs, { recursive: true });
    writeFileSync(join(debs, 'old_1.0_amd64.deb'), Buffer.alloc(64 * 1024, 1));
    writeFileSync(join(debs, 'linked_1.0_amd64.deb'), Buffer.alloc(64 * 1024, 2));
    // A build of this (live) process in progress: its own file and a hard link to a .deb (counted once).
    const archives = join(cache.dir, 'tmp', `${liveOwner()}-build-test`, 'tree', 'var', 'cache', 'apt', 'archives');
    mkdirSync(archives, { recursive: true });
    writeFileSync(join(archives, '..', 'pkgcache.bin'), Buffer.alloc(64 * 1024, 3));
    linkSync(join(debs, 'linked_1.0_amd64.deb'), join(archives, 'linked_1.0_amd64.deb'));
    const c = await cache.lease('c');
    // The layers alone (300,000 bytes) fit this bound: only the .deb files and the build make it overflow.
    const bounded = new OsLayerCache({ dir: cache.dir, maxBytes: 300_000 });
    expect(await bounded.evict()).toEqual(['a', 'b']);
    expect(await bounded.keys()).toEqual(['c']);
    // c is leased; the .deb file no build links goes, the linked one and the build stay.
    expect(readdirSync(debs)).toEqual(['linked_1.0_amd64.deb']);
    expect(existsSync(archives)).toBe(true);
    // A reserve for the next layer evicts as if it were already there.
    await c!.release();
    expect(await new OsLayerCache({ dir: cache.dir, maxBytes: 300_000 }).evict(150_000)).toEqual(['c']);
  });

  it('refuses a new layer that cannot fit even after eviction, before running mmdebstrap', async () => {
    // A mirror on 127.0.0.1 that answers every InRelease (the cache key needs their digests): nothing else is asked.
    const mirror = createServer((_req, res) => res.end('Origin: fake\nDate: Sat, 08 Nov 2025 09:23:11 UTC\n'));
    await new Promise<void>((resolve) => mirror.listen(0, '127.0.0.1', resolve));
    try {
      const port = (mirror.address() as { port: number }).port;
      const big = 2 * 1024 ** 3;
      const dir = cacheWith([{ key: 'big', bytes: big, usedAt: t0 }]).dir;
      const cache = new OsLayerCache({ dir, maxBytes: big + 100 * 1024 ** 2 });
      const held = await cache.lease('big');
      let err: unknown;
      try {
        await cache.acquire(spec({ mirror: { archive: `http://127.0.0.1:${port}/debian` } }));
      } catch (e) {
        err = e;
      }
      await held!.release();
      expect(isImagingError(err, 'disk-full'), String(err)).toBe(true);
      expect(String(err)).toMatch(/no room for another layer.*raise the bound/);
      // Refused before the build's directory existed: nothing was downloaded or written.
      expect(readdirSync(join(dir, 'tmp'))).toEqual([]);
      expect(await cache.keys()).toEqual(['big']);
    } finally {
      await new Promise((resolve) => mirror.close(resolve));
    }
  });
});

describe('the sweep at server start', () => {
  it('unmounts and removes the build trees of dead processes when the server starts, before any build', async (ctx) => {
    // A privileged build's crash leaves mounts in its tree; an ordinary user's builds mount nothing the host sees.
    if (process.getuid?.() !== 0) return ctx.skip('not root: cannot mount what a crashed privileged build leaves');
    const cacheDir = join(root.path, 'server-cache');
    const tree = join(cacheDir, 'os', 'tmp', '4194999.1-build-crashed', 'tree');
    for (const d of ['proc', 'dev/shm']) mkdirSync(join(tree, d), { recursive: true });
    // What a crash during mmdebstrap leaves: /proc and a bind of the host's /dev/shm mounted in the tree.
    execFileSync('mount', ['-t', 'proc', 'proc', join(tree, 'proc')]);
    execFileSync('mount', ['--bind', '/dev/shm', join(tree, 'dev/shm')]);
    expect(mountsUnder(tree)).toHaveLength(2);
    const dataDir = join(root.path, 'server-data');
    const server = await startServer({ port: 0, dataDir, cacheDir });
    try {
      expect(mountsUnder(tree)).toEqual([]);
      expect(readdirSync(join(cacheDir, 'os', 'tmp'))).toEqual([]);
      expect(existsSync('/dev/shm')).toBe(true);
    } finally {
      await server.close();
      for (const p of mountsUnder(tree)) execFileSync('umount', ['--lazy', p]);
    }
  });
});

describe('the .deb files a build in memory downloaded', () => {
  // keepDeb on its own: a link among a tree's downloads cannot be planted in a real mmdebstrap run (apt
  // writes them); the copy across file systems is the path a build in memory takes.
  it.runIf(existsSync('/dev/shm'))('are copied into the cache from another file system; a link among them is never followed, a FIFO never waited on', async () => {
    const cache = new OsLayerCache({ dir: join(root.path, `debs${n++}`) });
    await cache.evict(); // makes the layout
    const shm = mkdtempSync('/dev/shm/forge-test-debs-');
    try {
      writeFileSync(join(shm, 'real_1_all.deb'), 'a deb\n');
      symlinkSync('/etc/hostname', join(shm, 'evil_1_all.deb'));
      execFileSync('mkfifo', [join(shm, 'fifo_1_all.deb')]);
      const host = buildHostOf({ kind: 'privileged', reason: 'test' });
      const debs = join(cache.dir, 'debs');
      await keepDeb(debs, join(shm, 'real_1_all.deb'), 'real_1_all.deb', host);
      await keepDeb(debs, join(shm, 'evil_1_all.deb'), 'evil_1_all.deb', host);
      await keepDeb(debs, join(shm, 'fifo_1_all.deb'), 'fifo_1_all.deb', host); // without O_NONBLOCK: the test's timeout
      expect(readdirSync(join(cache.dir, 'debs'))).toEqual(['real_1_all.deb']);
      expect(readFileSync(join(cache.dir, 'debs', 'real_1_all.deb'), 'utf8')).toBe('a deb\n');
    } finally {
      rmSync(shm, { recursive: true, force: true });
    }
  });
});
