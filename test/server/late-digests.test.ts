// Late checksums take fair turns between owners (blobs/late-digests.ts): on a real store and real files,
// Bob's one file scheduled after Alice's three is hashed second, not fourth, so his read waits for one
// of her files at most; every file gets the sha256 and md5 that openssl computes.
import { execFileSync } from 'node:child_process';
import { randomFillSync } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LocalBlobs } from '../../src/server/blobs/local';
import { lateDigestsOf } from '../../src/server/blobs/late-digests';
import { JobRunner } from '../../src/server/jobs/runner';
import { systemClock } from '../../src/server/ports';
import { SqliteStore } from '../../src/server/store/sqlite/store';
import { tempDir } from './helpers';

const MIB = 1024 * 1024;
const openssl = (algorithm: string, file: string): string => /= ([0-9a-f]+)\s*$/.exec(execFileSync('openssl', ['dgst', `-${algorithm}`, file], { encoding: 'utf8' }))![1]!;

describe('late checksums in fair turns between owners', () => {
  const dir = tempDir('forge-digests-');
  const store = new SqliteStore(dir, systemClock);
  const blobs = new LocalBlobs(dir);
  const jobs = new JobRunner();
  const quiet = { error: () => undefined, warn: () => undefined, info: () => undefined };
  afterAll(async () => {
    await jobs.idle();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("hashes Bob's file right after the one of Alice's in progress, and each file as openssl does", async () => {
    const rows: Array<{ id: number; owner: string; path: string }> = [];
    for (const [owner, n] of [['alice', 1], ['alice', 2], ['alice', 3], ['bob', 1]] as const) {
      const key = `files/${owner}-${n}`;
      writeFileSync(join(dir, key), randomFillSync(Buffer.alloc(16 * MIB)));
      const row = await store.insert('artifact', {
        owner,
        doc: { name: `${owner}-${n}`, kind: 'SoftwareFile', file: { path: key, fileName: `${n}.bin`, size: 16 * MIB, mimeType: 'application/octet-stream', stored: 'now' } },
      });
      rows.push({ id: row.id, owner, path: key });
    }
    const late = lateDigestsOf({ store, blobs, jobs, log: quiet });
    for (const r of rows) late.schedule(r.id, r.owner);
    const hashed = async (id: number): Promise<boolean> => (await store.get('artifact', id))?.doc.file?.sha256 !== undefined;
    const bob = await store.get('artifact', rows[3]!.id);
    await late.pendingFor(bob!);
    // Bob's is done after Alice's first; her third still waits (a single chain would have done it first).
    expect(await hashed(rows[3]!.id)).toBe(true);
    expect(await hashed(rows[0]!.id)).toBe(true);
    expect(await hashed(rows[2]!.id)).toBe(false);
    await jobs.idle();
    for (const r of rows) {
      const f = (await store.get('artifact', r.id))!.doc.file!;
      expect([f.sha256, f.md5]).toEqual([openssl('sha256', join(dir, r.path)), openssl('md5', join(dir, r.path))]);
    }
  });
});
