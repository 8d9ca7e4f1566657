// Where a build's copy of the OS layer goes (src/imaging/memory-folder.ts): a private folder in /dev/shm
// when memory has room, nothing when it has not or when turned off; a start sweeps the folders of
// processes no longer running, and only those (never a live build's, never another user's, never what a
// link points at).
// That the image's bytes do not depend on the place is checked end to end by
// test/e2e/real-image-reproducible.test.ts (one build each way).
import { chownSync, existsSync, lstatSync, mkdirSync, mkdtempSync, rmSync, statfsSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildHostOf } from '../../src/imaging/build-host';
import { MEMORY_DIR, memoryFolder, memoryGuard, sweepMemoryFolders } from '../../src/imaging/memory-folder';
import { processOwner } from '../../src/host/process-owner';

const privileged = buildHostOf({ kind: 'privileged', reason: 'test' });
const MiB = 1024 * 1024;
const made: string[] = [];
afterEach(() => {
  delete process.env.APPLIANCE_FORGE_TREE_IN_MEMORY;
  for (const p of made.splice(0)) rmSync(p, { recursive: true, force: true });
});

describe.runIf(existsSync(MEMORY_DIR) && statfsSync(MEMORY_DIR).type === 0x01021994)('the layer copy in memory', () => {
  it('is a new private folder of /dev/shm named for this process when memory has room', async () => {
    const dir = await memoryFolder(200 * MiB, privileged);
    expect(dir).toBeDefined();
    made.push(dir!);
    expect(dirname(dir!)).toBe(MEMORY_DIR);
    expect(basename(dir!).startsWith(`${processOwner()}-tree-`)).toBe(true);
    const st = lstatSync(dir!);
    expect(st.isDirectory()).toBe(true);
    expect(st.mode & 0o777).toBe(0o700);
    expect(st.uid).toBe(process.getuid!());
    // A layer's build folder: apt's `_apt` passes through it (it cannot list it).
    const layer = await memoryFolder(200 * MiB, privileged, 'layer');
    made.push(layer!);
    expect(basename(layer!).startsWith(`${processOwner()}-layer-`)).toBe(true);
    expect(lstatSync(layer!).mode & 0o777).toBe(0o711);
  });

  it('guards a build in memory: fires once /dev/shm grows past its bound, and not after it is stopped', async () => {
    const guard = memoryGuard(8 * MiB, 20);
    const big = join(MEMORY_DIR, `forge-test-guard-${process.pid}`);
    made.push(big);
    expect(guard.signal.aborted).toBe(false);
    writeFileSync(big, Buffer.alloc(12 * MiB, 1));
    await new Promise((resolve) => guard.signal.addEventListener('abort', resolve, { once: true }));
    expect(guard.why()).toBe('it grew past 8 MiB');
    expect(String((guard.signal.reason as Error).message)).toBe('the build in memory stopped: it grew past 8 MiB');
    guard.stop();
    rmSync(big);
    const stopped = memoryGuard(8 * MiB, 20);
    stopped.stop();
    writeFileSync(big, Buffer.alloc(12 * MiB, 1));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(stopped.signal.aborted).toBe(false);
  });

  it('is not used when turned off, or for a tree larger than /dev/shm has room for', async () => {
    process.env.APPLIANCE_FORGE_TREE_IN_MEMORY = '0';
    expect(await memoryFolder(200 * MiB, privileged)).toBeUndefined();
    delete process.env.APPLIANCE_FORGE_TREE_IN_MEMORY;
    const fs = statfsSync(MEMORY_DIR);
    expect(await memoryFolder(fs.bavail * fs.bsize, privileged)).toBeUndefined();
  });

  it('sweeps the folders of dead processes only, removing a link itself and never its target', async () => {
    const dead = join(MEMORY_DIR, `999999999.1-tree-${process.pid}`); // no pid is that high (pid_max ≤ 4194304)
    const deadLayer = join(MEMORY_DIR, `999999999.1-layer-${process.pid}`);
    const live = join(MEMORY_DIR, `${processOwner()}-tree-live-${process.pid}`);
    const other = join(MEMORY_DIR, `forge-test-keep-${process.pid}`);
    const outside = mkdtempSync(join(tmpdir(), 'forge-sweep-target-'));
    const link = join(MEMORY_DIR, `999999998.1-tree-${process.pid}`);
    made.push(dead, deadLayer, live, other, outside, link);
    for (const d of [dead, deadLayer, live, other]) {
      mkdirSync(join(d, 'root', 'etc'), { recursive: true });
      writeFileSync(join(d, 'root', 'etc', 'hostname'), 'x\n');
    }
    writeFileSync(join(outside, 'keep'), 'k');
    symlinkSync(outside, link);
    // A dead owner's name on a folder of another user (root makes it here): never descended into.
    const foreign = join(MEMORY_DIR, `999999997.1-tree-${process.pid}`);
    const asRoot = process.getuid?.() === 0;
    if (asRoot) {
      made.push(foreign);
      mkdirSync(join(foreign, 'root'), { recursive: true });
      chownSync(foreign, 65534, 65534);
    }
    expect(await sweepMemoryFolders(privileged)).toBeGreaterThanOrEqual(3);
    expect(existsSync(dead)).toBe(false);
    expect(existsSync(deadLayer)).toBe(false);
    expect(lstatSync(link, { throwIfNoEntry: false })).toBeUndefined();
    expect(existsSync(join(outside, 'keep'))).toBe(true);
    expect(existsSync(join(live, 'root', 'etc', 'hostname'))).toBe(true);
    expect(existsSync(join(other, 'root', 'etc', 'hostname'))).toBe(true);
    if (asRoot) expect(existsSync(join(foreign, 'root'))).toBe(true);
  });
});
