// LRU eviction by total size, leases (in this process and in another one), and the sweep of what a
// crashed build leaves. Tiny fake entries (a meta.json declaring their size): a real build would add
// only minutes here, the eviction logic reads nothing else of an entry.
import { mkdirSync, readdirSync, utimesSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { OsLayerCache } from '../../../src/server/imaging/os';
import { removeWorkerScript, scratch, startWorker } from './helpers';

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
