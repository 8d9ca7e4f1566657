// OS layers kept in a plain folder between runs (APPLIANCE_FORGE_LAYER_ARCHIVE_DIR), as a CI cache step
// keeps it: a layer of the suite's cache is put there once; a cache of its own restores it without
// mmdebstrap (counted by a wrapper on PATH, not by the code under test), the same tree as find(1) and
// sha256sum(1) read it; then the command line's `apply` on an empty cache builds the example image with
// no mmdebstrap run. The folder comes back from outside: a changed archive, a malformed meta, a link and
// a name that is not a key, and the folder itself a link, are refused in words; a lock left by a dead process is
// taken over.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { folderLayerTier, OsLayerCache, SharedLayerError, sharedLayerKey } from '../../../src/imaging/os';
import { mirrorState } from '../../../src/imaging/os/mirror-state';
import { currentBuildHost } from '../../../src/imaging/build-host';
import { cliBundle, runCli } from '../../cli/helpers/cli';
import { examplesWorkspace } from '../../engine/helpers/service';
import { TEST_CACHE, countMmdebstrap, listing, privateCache, requireBuildPrerequisites, scratch, spec } from './helpers';

const KEY = 'ab'.repeat(32);

describe('OS layers kept in a folder between runs', () => {
  const counter = scratch('folder-count');
  const archives = scratch('folder-archives');
  const mine = privateCache('folder-b');
  const spare = scratch('folder-spare');
  const runs = countMmdebstrap(counter.path);
  const savedPath = process.env.PATH;

  beforeAll(() => {
    requireBuildPrerequisites();
    process.env.PATH = runs.env.PATH;
  });
  afterAll(() => {
    process.env.PATH = savedPath;
    for (const s of [counter, archives, mine, spare]) s.cleanup();
  });

  it('a layer of the suite cache is put in the folder; a cache of its own restores it without mmdebstrap, the same tree', async () => {
    const tier = folderLayerTier(join(archives.path, 'layers'));
    const one = new OsLayerCache({ dir: TEST_CACHE, shared: tier });
    const a = await one.acquire(spec());
    try {
      await one.settle();
      const key = sharedLayerKey(spec(), (await mirrorState(spec())).indexes, currentBuildHost());
      expect(readdirSync(join(archives.path, 'layers')).sort()).toEqual([`${key}.json`, `${key}.tar`]);
      const before = runs.runs();
      const two = new OsLayerCache({ dir: mine.path, shared: tier });
      const messages: string[] = [];
      const b = await two.acquire(spec(), { onProgress: (p) => messages.push(p.message) });
      try {
        expect(runs.runs()).toBe(before);
        expect(messages).toContain('OS layer ready (built by another worker)');
        expect(b.installed).toEqual(a.installed);
        expect(listing(b.dir, true)).toBe(listing(a.dir, true));
      } finally {
        await b.release();
      }
      await two.settle();
    } finally {
      await a.release();
    }
  });

  it('refuses a changed archive, a malformed meta, a link and a name that is not a key, in words', async () => {
    const dir = join(spare.path, 'hostile');
    mkdirSync(dir);
    const tier = folderLayerTier(dir);
    const archive = join(spare.path, 'layer.tar');
    writeFileSync(archive, 'an archive');
    await tier.put(KEY, archive, { installed: [{ name: 'bash', version: '5.2', arch: 'amd64' }], sourceDateEpoch: 1 });
    expect(await tier.has(KEY)).toBe(true);
    const meta = await tier.fetch(KEY, join(spare.path, 'fetched-1.tar'));
    expect(meta).toEqual({ installed: [{ name: 'bash', version: '5.2', arch: 'amd64' }], sourceDateEpoch: 1 });
    expect(readFileSync(join(spare.path, 'fetched-1.tar'), 'utf8')).toBe('an archive');

    writeFileSync(join(dir, `${KEY}.tar`), 'another archive');
    const changed = await tier.fetch(KEY, join(spare.path, 'fetched-2.tar')).catch((e: unknown) => e);
    expect(changed).toBeInstanceOf(SharedLayerError);
    expect((changed as Error).message).toMatch(/is not the file that was stored: its sha256 is [0-9a-f]{64}, not [0-9a-f]{64}/);

    const expected = execFileSync('sha256sum', [join(dir, `${KEY}.tar`)], { encoding: 'utf8' }).split(' ')[0]!;
    writeFileSync(join(dir, `${KEY}.json`), JSON.stringify({ sha256: expected, installed: 'bash', sourceDateEpoch: 1 }));
    const malformed = await tier.fetch(KEY, join(spare.path, 'fetched-3.tar')).catch((e: unknown) => e);
    expect(malformed).toBeInstanceOf(SharedLayerError);
    expect((malformed as Error).message).toMatch(/has a malformed meta/);

    const other = 'cd'.repeat(32);
    writeFileSync(join(dir, `${other}.json`), '{}');
    symlinkSync('/etc/passwd', join(dir, `${other}.tar`));
    const linked = await tier.has(other).catch((e: unknown) => e);
    expect(linked).toBeInstanceOf(SharedLayerError);
    expect((linked as Error).message).toMatch(/is not a regular file/);

    // The folder itself a link (a checkout can plant one where the step writes as root): refused, nothing written.
    const elsewhere = join(spare.path, 'elsewhere');
    mkdirSync(elsewhere);
    symlinkSync(elsewhere, join(spare.path, 'linked'));
    const viaLink = folderLayerTier(join(spare.path, 'linked'));
    for (const attempt of [viaLink.has(KEY), viaLink.put(KEY, archive, { installed: [], sourceDateEpoch: 1 }), viaLink.tryLock(KEY)]) {
      const refused = await attempt.catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(SharedLayerError);
      expect((refused as Error).message).toMatch(/is not a folder \(a link\?\)/);
    }
    expect(readdirSync(elsewhere)).toEqual([]);

    const climbing = await tier.has('../../etc/passwd').catch((e: unknown) => e);
    expect(climbing).toBeInstanceOf(SharedLayerError);
    expect((climbing as Error).message).toMatch(/is not an OS layer key/);
  });

  it("holds a key's lock for one holder at a time and takes over a lock whose process is gone", async () => {
    const dir = join(spare.path, 'locks');
    const tier = folderLayerTier(dir);
    const first = await tier.tryLock(KEY);
    expect(first).toBeTypeOf('function');
    expect(await tier.tryLock(KEY)).toBeUndefined();
    await first!();
    // A pid no process has: the lock of a run that was killed.
    const gone = Number(execFileSync('sh', ['-c', 'sh -c "echo \\$\\$"'], { encoding: 'utf8' }).trim());
    writeFileSync(join(dir, `${KEY}.lock`), String(gone));
    const taken = await tier.tryLock(KEY);
    expect(taken).toBeTypeOf('function');
    await taken!();
  });

  it('apply on an empty cache with the folder set builds the example image without running mmdebstrap', async () => {
    cliBundle();
    const dir = examplesWorkspace('af-folder-tier-');
    const env = { PATH: runs.env.PATH ?? '', APPLIANCE_FORGE_LAYER_ARCHIVE_DIR: join(archives.path, 'ci-cache') };
    // The first run fills the folder from the suite's cache (or builds the layer, on a cold machine).
    const first = await runCli(['apply', 'local.yml', '--output', 'out-1', '--json'], { cwd: dir, env, killAfterMs: 1_500_000 });
    expect(first.code, first.stderr.slice(-3000)).toBe(0);
    expect(readdirSync(env.APPLIANCE_FORGE_LAYER_ARCHIVE_DIR).filter((n) => n.endsWith('.tar'))).toHaveLength(1);
    const before = runs.runs();
    const empty = scratch('folder-empty-cache');
    try {
      const second = await runCli(['apply', 'local.yml', '--data-dir', 'data-2', '--output', 'out-2', '--json'], {
        cwd: dir, env: { ...env, APPLIANCE_FORGE_CACHE_DIR: empty.path }, killAfterMs: 1_500_000,
      });
      expect(second.code, second.stderr.slice(-3000)).toBe(0);
      expect(runs.runs()).toBe(before);
      const images = (JSON.parse(second.stdout) as { files: Array<{ path: string }> }).files.filter((f) => f.path.endsWith('.qcow2'));
      expect(images).toHaveLength(1);
    } finally {
      empty.cleanup();
    }
  });
});
