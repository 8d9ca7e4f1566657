// The OS layers a farm's workers share, on the real parts: the index in PostgreSQL 15, the archives
// in Swift's S3, both on 127.0.0.1. A layer of the suite's cache is shared once; a cache of its own (a
// second worker) then gets it without running mmdebstrap, and its tree is the same as find(1),
// sha256sum(1) and Python's os.getxattr read them (owners, modes, links, contents, ACLs). An archive
// changed in the bucket is refused by its digest; the tier's lock is held by one at a time.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OsLayerCache, sharedLayerKey, type SharedLayerTier } from '../../../src/imaging/os';
import { mirrorState } from '../../../src/imaging/os/mirror-state';
import { currentBuildHost } from '../../../src/imaging/build-host';
import { openS3Blobs, type S3Blobs } from '../../../src/server/blobs/s3';
import { SharedLayerError } from '../../../src/imaging/os';
import { sharedLayers } from '../../../src/server/shared-layers';
import { openPgStore, type PgStore } from '../../../src/server/store/postgres/store';
import { farmServices, farmUnavailable } from '../../support/farm';
import { freshDatabase, sql } from '../../support/postgres';
import { TEST_CACHE, countMmdebstrap, listing, privateCache, requireBuildPrerequisites, scratch, spec } from './helpers';

const skip = farmUnavailable();
if (skip) console.warn(`SKIP shared OS layers: ${skip}`);

/** Every extended attribute of a tree (ACLs included), as Python reads them: `path name value-hex` lines. */
function xattrs(tree: string): string {
  const py = `import os,sys
r=sys.argv[1]
out=[]
for d,ds,fs in os.walk(r):
  for n in sorted(ds+fs):
    p=os.path.join(d,n)
    for a in sorted(os.listxattr(p,follow_symlinks=False)):
      out.append(os.path.relpath(p,r)+' '+a+' '+os.getxattr(p,a,follow_symlinks=False).hex())
print('\\n'.join(sorted(out)))`;
  return execFileSync('python3', ['-c', py, tree], { encoding: 'utf8', maxBuffer: 64 * 1024 ** 2 });
}

describe.skipIf(skip !== undefined)('OS layers shared through PostgreSQL and S3', () => {
  const counter = scratch('shared-count');
  const mine = privateCache('shared-b');
  const spare = scratch('shared-spare');
  let store: PgStore;
  let blobs: S3Blobs;
  let tier: SharedLayerTier;
  let dbUrl = '';
  let drop = async (): Promise<void> => undefined;
  let cleanUp = async (): Promise<void> => undefined;
  const savedPath = process.env.PATH;
  const runs = countMmdebstrap(counter.path);

  beforeAll(async () => {
    requireBuildPrerequisites();
    const { pg, s3 } = await farmServices();
    const db = await freshDatabase(pg);
    drop = db.drop;
    dbUrl = db.url;
    store = await openPgStore(db.url, { now: () => new Date() });
    blobs = await openS3Blobs(s3.url('layers-test'));
    cleanUp = () => s3.cleanUp();
    tier = sharedLayers(store.layers, blobs);
    process.env.PATH = runs.env.PATH;
  });
  afterAll(async () => {
    process.env.PATH = savedPath;
    blobs?.close();
    await store?.close();
    await drop();
    await cleanUp();
    for (const s of [counter, mine, spare]) s.cleanup();
  });

  it("a layer one worker has is shared once; another worker's cache restores it without mmdebstrap, the same tree", async () => {
    const one = new OsLayerCache({ dir: TEST_CACHE, shared: tier });
    const a = await one.acquire(spec());
    try {
      // Shared in the background; settle() waits for it, as a server's close does.
      await one.settle();
      const key = sharedLayerKey(spec(), (await mirrorState(spec())).indexes, currentBuildHost());
      expect(await tier.has(key)).toBe(true);
      const before = runs.runs();
      const two = new OsLayerCache({ dir: mine.path, shared: tier });
      const messages: string[] = [];
      const b = await two.acquire(spec(), { onProgress: (p) => messages.push(p.message) });
      try {
        expect(runs.runs()).toBe(before);
        expect(messages).toContain('OS layer ready (built by another worker)');
        expect(b.installed).toEqual(a.installed);
        expect(b.sourceDateEpoch).toBe(a.sourceDateEpoch);
        expect(listing(b.dir, true)).toBe(listing(a.dir, true));
        const attrs = xattrs(b.dir);
        expect(attrs).toContain('var/log/journal system.posix_acl_default');
        expect(attrs).toBe(xattrs(a.dir));
      } finally {
        await b.release();
      }
      // Once restored it is this cache's own: the next build of it is a plain hit.
      const again = await two.acquire(spec(), { onProgress: (p) => messages.push(p.message) });
      expect(again.fromCache).toBe(true);
      expect(messages.at(-1)).toBe('OS layer ready (from the cache)');
      await again.release();
      await two.settle();
    } finally {
      await a.release();
    }
  });

  it('an archive changed in the bucket is refused by its digest, in words', async () => {
    const [entry] = await sql<{ key: string; blob: string }>(dbUrl, 'SELECT key, blob FROM appliance_forge.os_layers');
    expect(entry).toBeDefined();
    const other = join(spare.path, 'other.tar');
    writeFileSync(other, 'not the layer');
    await blobs.copyIn(other, entry!.blob);
    const err = await tier.fetch(entry!.key, join(spare.path, 'fetched.tar')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SharedLayerError);
    expect(String((err as Error).message)).toMatch(/is not the file that was stored: its sha256 is [0-9a-f]{64}, not [0-9a-f]{64}/);
  });

  it("the tier's lock of a key is held by one at a time, and freed by its holder", async () => {
    const first = await tier.tryLock('k');
    expect(first).toBeTypeOf('function');
    expect(await tier.tryLock('k')).toBeUndefined();
    const another = await tier.tryLock('another');
    expect(another).toBeTypeOf('function');
    await first!();
    await another!();
    const again = await tier.tryLock('k');
    expect(again).toBeTypeOf('function');
    await again!();
  });
});
