// A real OS layer from the real Debian mirror (Minimal + nginx, cloud kernel), read back with
// dpkg-query independently of the code; the same for Debian 13 (trixie), whose accounts are compared
// with the model's; then a cache hit that runs no mmdebstrap at all; then bad
// requests (a pinned version the mirror lacks, an unknown package) that fail naming the package and keep nothing;
// an abort in the middle of a build kills mmdebstrap's whole process group and keeps nothing; a layer built
// in memory is kept in the cache in the background, or, when the cache's file system is full, only leased.
import { execFileSync } from 'node:child_process';
import { existsSync, linkSync, lstatSync, mkdirSync, readFileSync, readdirSync, readlinkSync, statSync, statfsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AbortedError } from '../../../src/errors';
import { isImagingError } from '../../../src/imaging/errors';
import { layerKey, OsLayerCache, type OsLayer, type OsLayerProgress } from '../../../src/imaging/os';
import { STANDARD_GROUPS, SYSTEM_USERS, TAKEN_GROUPS } from '../../../src/model/accounts';
import { releaseBySuite } from '../../../src/model/releases';
import { MEMORY_DIR } from '../../../src/imaging/memory-folder';
import { processOwner } from '../../../src/host/process-owner';
import { currentSandbox, hostId } from '../../../src/host/sandbox';
import { TEST_CACHE, countMmdebstrap, listing, privateCache, removeWorkerScript, requireBuildPrerequisites, scratch, spec, startWorker } from './helpers';

const counterDir = scratch('count');
afterAll(() => {
  counterDir.cleanup();
  removeWorkerScript();
});
const counter = countMmdebstrap(counterDir.path);
const savedPath = process.env.PATH;
beforeAll(() => {
  requireBuildPrerequisites();
  process.env.PATH = counter.env.PATH; // the code spawns mmdebstrap from PATH: every run is logged
});
afterAll(() => {
  process.env.PATH = savedPath;
});

/** This process's folders of layers built in memory (memory-folder.ts names them `<owner>-layer-…`). */
const MEMORY_LAYERS = join(MEMORY_DIR, `${processOwner()}-layer-`);
const memoryLayers = (): string[] => readdirSync(MEMORY_DIR).filter((n) => join(MEMORY_DIR, n).startsWith(MEMORY_LAYERS));

function dpkgQuery(tree: string): { name: string; version: string; arch: string }[] {
  const out = execFileSync('dpkg-query', [`--admindir=${tree}/var/lib/dpkg`, '-W', '-f=${db:Status-Abbrev} ${Package} ${Version} ${Architecture}\n'], { encoding: 'utf8' });
  return out.split('\n').filter((l) => l.startsWith('ii')).map((l) => {
    const [, name, version, arch] = l.trim().split(/\s+/);
    return { name: name!, version: version!, arch: arch! };
  }).sort((a, b) => a.name.localeCompare(b.name, 'en'));
}

describe('a real OS layer', () => {
  const cache = new OsLayerCache({ dir: TEST_CACHE });
  const nginx = spec({ packages: [{ name: 'nginx' }] });
  let layer: OsLayer;
  const progress: OsLayerProgress[] = [];
  let runsBefore = 0;
  // The build's debug log (APPLIANCE_FORGE_LOG=debug): each stage, and each initramfs mmdebstrap's run made.
  const notes: string[] = [];

  beforeAll(async () => {
    runsBefore = counter.runs();
    const savedLog = process.env.APPLIANCE_FORGE_LOG;
    process.env.APPLIANCE_FORGE_LOG = 'debug';
    const write = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      notes.push(String(chunk));
      return true;
    });
    try {
      layer = await cache.acquire(nginx, { onProgress: (p) => progress.push(p) });
    } finally {
      write.mockRestore();
      if (savedLog === undefined) delete process.env.APPLIANCE_FORGE_LOG;
      else process.env.APPLIANCE_FORGE_LOG = savedLog;
    }
  }, 600_000);
  afterAll(async () => {
    await layer?.release();
    await cache.settle();
  }, 120_000);

  it('holds the kernel, systemd, nginx and the boot set, as dpkg reads the tree', () => {
    const pkgs = dpkgQuery(layer.dir);
    const names = new Set(pkgs.map((p) => p.name));
    for (const n of ['linux-image-cloud-amd64', 'systemd', 'systemd-sysv', 'udev', 'nginx', 'ifupdown', 'isc-dhcp-client', 'initramfs-tools', 'apt']) {
      expect(names, n).toContain(n);
    }
    expect(names.has('openssh-server')).toBe(false);
    expect(names.has('linux-image-amd64')).toBe(false);
    expect(layer.installed.map((p) => `${p.name} ${p.version} ${p.arch}`).sort()).toEqual(pkgs.map((p) => `${p.name} ${p.version} ${p.arch}`).sort());
    const boot = readdirSync(join(layer.dir, 'boot'));
    expect(boot.some((f) => /^vmlinuz-.*-cloud-amd64$/.test(f))).toBe(true);
    expect(boot.some((f) => /^initrd\.img-.*-cloud-amd64$/.test(f))).toBe(true);
    expect(existsSync(join(layer.dir, 'usr/lib/grub/i386-pc/boot.img'))).toBe(false); // GRUB is the host's (bootdisk.ts)
  });

  it('is small: no manual pages or docs, but the copyright files, and no .deb left in the tree', () => {
    expect(readdirSync(join(layer.dir, 'usr/share/man')).filter((d) => readdirSync(join(layer.dir, 'usr/share/man', d)).length > 0)).toEqual([]);
    expect(existsSync(join(layer.dir, 'usr/share/doc/nginx/copyright'))).toBe(true);
    expect(existsSync(join(layer.dir, 'usr/share/doc/nginx/changelog.Debian.gz'))).toBe(false);
    expect(readdirSync(join(layer.dir, 'var/cache/apt/archives')).filter((f) => f.endsWith('.deb'))).toEqual([]);
    // udev's device name tables are left out and its compiled database made without them (13 MB with them);
    // interface naming stays. No backups of dpkg's or debconf's databases.
    const hwdb = readdirSync(join(layer.dir, 'usr/lib/udev/hwdb.d'));
    expect(hwdb.filter((f) => /^20-(OUI|.*-vendor.*)\.hwdb$/.test(f))).toEqual([]);
    expect(hwdb).toContain('20-net-ifname.hwdb');
    expect(statSync(join(layer.dir, 'usr/lib/udev/hwdb.bin')).size).toBeLessThan(2 * 1024 ** 2);
    for (const d of ['var/lib/dpkg', 'var/cache/debconf']) expect(readdirSync(join(layer.dir, d)).filter((f) => f.endsWith('-old')), d).toEqual([]);
    // dpkg's build-only force-unsafe-io does not stay in the image: later installs in the machine fsync as usual.
    const dpkgCfg = join(layer.dir, 'etc/dpkg/dpkg.cfg.d');
    for (const f of readdirSync(dpkgCfg)) expect(readFileSync(join(dpkgCfg, f), 'utf8'), f).not.toMatch(/unsafe-io/);
    const mounts = execFileSync('findmnt', ['-rn', '-o', 'TARGET'], { encoding: 'utf8' }).split('\n');
    expect(mounts.filter((m) => m.startsWith(layer.dir))).toEqual([]);
  });

  it("has no file owned by an id the image does not give (nobody, 65534, where the host's ids were unmapped)", () => {
    const sandbox = currentSandbox();
    const [uid, gid] = [hostId(sandbox, 65534, 'uid'), hostId(sandbox, 65534, 'gid')];
    const found = execFileSync('find', [layer.dir, '-xdev', '(', '-uid', String(uid), '-o', '-gid', String(gid), ')', '-print'], { encoding: 'utf8' });
    expect(found).toBe('');
  });

  it('reports progress that only grows, through resolving, downloading and installing (when built here)', () => {
    if (layer.fromCache) {
      // Built by an earlier run of the suite: the progress of a build is checked by the abort test's build.
      expect(counter.runs()).toBe(runsBefore);
      return;
    }
    expect(counter.runs()).toBe(runsBefore + 1);
    const phases = [...new Set(progress.map((p) => p.phase))];
    expect(phases).toEqual(['resolving', 'downloading', 'installing']);
    for (let i = 1; i < progress.length; i++) expect(progress[i]!.fraction).toBeGreaterThanOrEqual(progress[i - 1]!.fraction);
    expect(progress.at(-1)!.fraction).toBe(1);
    expect(progress.some((p) => /^downloading \d+\/\d+ packages/.test(p.message) || /^installing \d+\/\d+ packages/.test(p.message))).toBe(true);
  });

  it('has its initramfs made once, after every package is set up, with the links to it (counted when built here)', () => {
    const [initrd] = readdirSync(join(layer.dir, 'boot')).filter((f) => f.startsWith('initrd.img-'));
    const version = initrd!.slice('initrd.img-'.length);
    for (const link of ['initrd.img', 'initrd.img.old']) expect(readlinkSync(join(layer.dir, link)), link).toBe(`boot/initrd.img-${version}`);
    for (const link of ['vmlinuz', 'vmlinuz.old']) expect(readlinkSync(join(layer.dir, link)), link).toBe(`boot/vmlinuz-${version}`);
    if (layer.fromCache) return; // built by an earlier run: its log is gone
    // The kernel's postinst makes none (INITRD=No) and initramfs-tools' trigger none: one, by the recipe's hook.
    const made = notes.filter((n) => /update-initramfs: Generating \/boot\/initrd\.img-/.test(n));
    expect(made, notes.filter((n) => n.includes('mmdebstrap +')).join('')).toHaveLength(1);
    // Each stage with its duration, mmdebstrap's own steps with their times.
    expect(notes.some((n) => /^debug: build: mmdebstrap \d+\.\d\d s\n$/.test(n))).toBe(true);
    expect(notes.some((n) => /^debug: build: mmdebstrap \+\d+\.\d s running --customize-hook/.test(n))).toBe(true);
  });

  it('is taken from the cache the second time: same tree, no mmdebstrap run', async () => {
    const before = counter.runs();
    const seen: OsLayerProgress[] = [];
    const again = await cache.acquire(nginx, { onProgress: (p) => seen.push(p) });
    try {
      expect(seen.map((p) => [p.phase, p.fraction])).toEqual([['resolving', 0], ['installing', 1]]);
      expect(again.fromCache).toBe(true);
      expect(again.key).toBe(layer.key);
      // Built here in memory: this process leases that tree while it holds a lease of it.
      expect(again.dir).toBe(layer.dir);
      expect(again.installed).toEqual(layer.installed);
    } finally {
      await again.release();
    }
    expect(counter.runs()).toBe(before);
  });

  it('is found by another process too (same key, from the cache, no mmdebstrap run)', async () => {
    const before = counter.runs();
    const w = startWorker({ op: 'acquire', cacheDir: TEST_CACHE, spec: nginx }, counter.env);
    // The cache's own entry (a layer built here in memory is kept there before the build lock is let go).
    expect(await w.messages).toEqual([{ ok: true, key: layer.key, fromCache: true, dir: join(TEST_CACHE, 'layers', layer.key, 'tree'), packages: layer.installed.length }]);
    expect(counter.runs()).toBe(before);
  });

  it('gives another key for another package set or kernel', async () => {
    const idx = { u: 'x' };
    const k = (s: Parameters<typeof layerKey>[0]) => layerKey(s, idx).key;
    expect(k(nginx)).not.toBe(k(spec({ packages: [{ name: 'nginx' }, { name: 'curl' }] })));
    expect(k(nginx)).not.toBe(k({ ...nginx, kernel: 'generic' }));
    expect(k(nginx)).not.toBe(layerKey(nginx, { u: 'y' }).key);
    expect(k(spec({ packages: [{ name: 'a' }, { name: 'b' }] }))).toBe(k(spec({ packages: [{ name: 'b' }, { name: 'a' }] })));
    // serve --layers-per-owner: one key per owner; without a partition the key is the one it always was.
    expect(k({ ...nginx, partition: 'alice' })).not.toBe(k(nginx));
    expect(k({ ...nginx, partition: 'alice' })).not.toBe(k({ ...nginx, partition: 'bob' }));
    expect(k({ ...nginx, partition: undefined })).toBe(k(nginx));
  });
});

describe('a real Debian 13 (trixie) OS layer', () => {
  const cache = new OsLayerCache({ dir: TEST_CACHE });
  // What an OpenStack image with keys gets: cloud-init and an ssh server, plus nginx.
  const trixie = spec({ suite: 'trixie', cloudInit: true, packages: [{ name: 'nginx' }, { name: 'openssh-server' }] });
  let layer: OsLayer;
  beforeAll(async () => {
    layer = await cache.acquire(trixie);
  }, 900_000);
  afterAll(async () => {
    await layer?.release();
    await cache.settle();
  }, 120_000);

  it('is Debian 13 with its cloud kernel, the boot set and the tools the accounts are set up with (chpasswd)', () => {
    expect(readFileSync(join(layer.dir, 'etc/debian_version'), 'utf8')).toMatch(/^13\.\d+/);
    const names = new Set(dpkgQuery(layer.dir).map((p) => p.name));
    for (const n of ['linux-image-cloud-amd64', 'systemd-sysv', 'udev', 'ifupdown', 'isc-dhcp-client', 'initramfs-tools', 'zstd', 'passwd', 'cloud-init', 'nginx', 'openssh-server']) {
      expect(names, n).toContain(n);
    }
    for (const tool of ['usr/sbin/chpasswd', 'usr/sbin/useradd', 'usr/sbin/groupadd']) expect(existsSync(join(layer.dir, tool)), tool).toBe(true);
    expect(readdirSync(join(layer.dir, 'boot')).some((f) => /^vmlinuz-6\.12\..*-cloud-amd64$/.test(f))).toBe(true);
    expect(readdirSync(join(layer.dir, 'boot')).some((f) => /^initrd\.img-6\.12\..*-cloud-amd64$/.test(f))).toBe(true);
  });

  it('has no account or group the model does not know as taken (a declared user may not reuse one)', () => {
    const names = (f: string) => readFileSync(join(layer.dir, 'etc', f), 'utf8').split('\n').filter(Boolean).map((l) => l.split(':')[0]!);
    expect(names('passwd').filter((n) => !SYSTEM_USERS.has(n))).toEqual([]);
    // Beyond the groups every release has, exactly the release's own: taken, but no user's group unless declared.
    const extra = names('group').filter((n) => !STANDARD_GROUPS.has(n));
    expect(extra).toEqual(releaseBySuite('trixie')!.extraGroups);
    for (const g of extra) expect(TAKEN_GROUPS.has(g)).toBe(true);
  });
});

describe('bad package requests', () => {
  // Made when the block runs (a filtered run that skips it leaves nothing behind).
  let priv: ReturnType<typeof privateCache>;
  beforeAll(() => {
    priv = privateCache('bad');
  });
  afterAll(() => priv?.cleanup());

  async function failure(s: ReturnType<typeof spec>): Promise<unknown> {
    const cache = new OsLayerCache({ dir: priv.path });
    const e = await cache.acquire(s).then(() => undefined, (err: unknown) => err);
    expect(await cache.keys()).toEqual([]);
    expect(readdirSync(join(priv.path, 'tmp'))).toEqual([]);
    return e;
  }

  it('a pinned version the mirror lacks and an unknown package are both named (one mmdebstrap run)', async () => {
    const e = await failure(spec({ packages: [{ name: 'nginx', version: '0.0.1-1' }, { name: 'no-such-package-af' }] }));
    expect(isImagingError(e, 'input')).toBe(true);
    expect((e as Error).message).toMatch(/nginx version 0\.0\.1-1/);
    expect((e as Error).message).toMatch(/no-such-package-af/);
  });

  it('an unreachable mirror is named, before any build', async () => {
    const e = await failure(spec({ mirror: { archive: 'http://127.0.0.1:9/debian' } }));
    expect(isImagingError(e)).toBe(true);
    expect((e as Error).message).toMatch(/127\.0\.0\.1:9/);
  });

  it('hostile names never reach a command line', async () => {
    for (const bad of ['nginx;rm -rf /', '--help', 'a b']) {
      const e = await failure(spec({ packages: [{ name: bad }] }));
      expect(isImagingError(e, 'input')).toBe(true);
    }
    const e = await failure(spec({ mirror: { archive: 'file:///etc' } }));
    expect((e as Error).message).toMatch(/http/);
  });
});

describe('an aborted build', () => {
  // Made when the block runs (a filtered run that skips it leaves nothing behind).
  let priv: ReturnType<typeof privateCache>;
  beforeAll(() => {
    priv = privateCache('abort');
  });
  afterAll(() => priv?.cleanup());

  /** Processes of a process group, read from /proc (field 5 of stat), not from the code under test. */
  function groupMembers(pgid: number): number[] {
    const out: number[] = [];
    for (const d of readdirSync('/proc')) {
      if (!/^\d+$/.test(d)) continue;
      try {
        const st = readFileSync(`/proc/${d}/stat`, 'utf8');
        const fields = st.slice(st.lastIndexOf(')') + 2).split(' ');
        if (Number(fields[2]) === pgid && fields[0] !== 'Z') out.push(Number(d));
      } catch {
        // exited meanwhile
      }
    }
    return out;
  }

  it('kills mmdebstrap and all under it once downloading, and removes the partial tree', async () => {
    const cache = new OsLayerCache({ dir: priv.path });
    const ac = new AbortController();
    const progress: OsLayerProgress[] = [];
    const runsBefore = counter.runs();
    const e = await cache
      .acquire(spec({ packages: [{ name: 'curl' }] }), {
        signal: ac.signal,
        onProgress: (p) => {
          progress.push(p);
          if (p.phase === 'downloading') ac.abort();
        },
      })
      .then(() => undefined, (err: unknown) => err);
    expect(e).toBeInstanceOf(AbortedError);
    expect(counter.runs()).toBe(runsBefore + 1);
    // mmdebstrap ran with its own process group (its pid, logged by the PATH wrapper): nothing of it is left.
    const pid = Number(readFileSync(join(counterDir.path, 'mmdebstrap-runs.log'), 'utf8').trim().split('\n').at(-1));
    expect(groupMembers(pid)).toEqual([]);
    expect(await cache.keys()).toEqual([]);
    expect(readdirSync(join(priv.path, 'tmp'))).toEqual([]);
    const mounts = execFileSync('findmnt', ['-rn', '-o', 'TARGET'], { encoding: 'utf8' }).split('\n');
    expect(mounts.filter((m) => m.startsWith(priv.path) || m.startsWith(MEMORY_LAYERS))).toEqual([]);
    expect(memoryLayers()).toEqual([]);
    expect(progress.map((p) => p.phase)).toContain('resolving');
    expect(progress.at(-1)!.phase).toBe('downloading');
    for (let i = 1; i < progress.length; i++) expect(progress[i]!.fraction).toBeGreaterThanOrEqual(progress[i - 1]!.fraction);
  }, 600_000);
});

describe('a layer built in memory (/dev/shm), kept in the cache in the background', () => {
  // An empty cache: everything is downloaded, so what the build keeps of its downloads is seen.
  let dir: ReturnType<typeof scratch>;
  let inMemory: { key: string; installed: string[]; entries: string };
  beforeAll(() => {
    dir = scratch('memory');
  });
  afterAll(() => dir?.cleanup());
  const curl = spec({ packages: [{ name: 'curl' }] });
  const names = (l: OsLayer): string[] => l.installed.map((p) => `${p.name} ${p.version} ${p.arch}`);

  it('is leased from memory at once; its copy in the cache is the same tree with the downloads beside it; the folder goes with the last lease', async () => {
    const cache = new OsLayerCache({ dir: join(dir.path, 'a') });
    const runs = counter.runs();
    const layer = await cache.acquire(curl);
    try {
      expect(counter.runs()).toBe(runs + 1);
      expect(layer.fromCache).toBe(false);
      expect(layer.dir.startsWith(MEMORY_LAYERS)).toBe(true);
      const tree = listing(layer.dir, true);
      await cache.settle();
      expect(await cache.keys()).toEqual([layer.key]);
      expect(listing(join(cache.dir, 'layers', layer.key, 'tree'), true)).toBe(tree);
      // Each installed package's .deb file is kept for the next builds (the archive of the tree has none).
      const debs = readdirSync(join(cache.dir, 'debs'));
      for (const p of layer.installed) expect(debs.some((f) => f.startsWith(`${p.name}_`)), p.name).toBe(true);
      expect(readdirSync(join(cache.dir, 'tmp'))).toEqual([]);
      // Still leased: the tree in memory stays until its lease ends.
      expect(existsSync(layer.dir)).toBe(true);
      inMemory = { key: layer.key, installed: names(layer), entries: listing(layer.dir, false) };
    } finally {
      await layer.release();
      await cache.settle();
    }
    expect(existsSync(dirname(layer.dir))).toBe(false);
    expect(memoryLayers()).toEqual([]);
    // A new lease reads the cache's entry: no build.
    const again = await cache.acquire(curl);
    expect(again.dir).toBe(join(cache.dir, 'layers', layer.key, 'tree'));
    await again.release();
    expect(counter.runs()).toBe(runs + 1);
  }, 600_000);

  it('is built on disk instead once it outgrows its bound in memory, and comes out the same', async () => {
    expect(inMemory).toBeDefined();
    // The first build's downloads, linked: the one in memory copies them in (past its 16 MiB bound), the one on disk links them.
    const b = join(dir.path, 'b');
    mkdirSync(join(b, 'debs'), { recursive: true });
    for (const f of readdirSync(join(dir.path, 'a', 'debs'))) linkSync(join(dir.path, 'a', 'debs', f), join(b, 'debs', f));
    const cache = new OsLayerCache({ dir: b, memoryBytes: 16 * 1024 ** 2 });
    const runs = counter.runs();
    const notes: string[] = [];
    const savedLog = process.env.APPLIANCE_FORGE_LOG;
    process.env.APPLIANCE_FORGE_LOG = 'debug';
    const write = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      notes.push(String(chunk));
      return true;
    });
    let layer: OsLayer;
    try {
      layer = await cache.acquire(curl);
    } finally {
      write.mockRestore();
      if (savedLog === undefined) delete process.env.APPLIANCE_FORGE_LOG;
      else process.env.APPLIANCE_FORGE_LOG = savedLog;
    }
    try {
      expect(notes.filter((n) => n.includes('the OS layer in memory stopped (it grew past 16 MiB): building it on disk'))).toHaveLength(1);
      expect(counter.runs()).toBe(runs + 2);
      expect(layer.dir).toBe(join(b, 'layers', layer.key, 'tree'));
      expect(memoryLayers()).toEqual([]);
      expect(layer.key).toBe(inMemory.key);
      expect(names(layer)).toEqual(inMemory.installed);
      expect(listing(layer.dir, false)).toBe(inMemory.entries);
      // Linked, not copied: the downloads of the first build are the same files.
      const deb = readdirSync(join(b, 'debs')).find((f) => f.startsWith('curl_'))!;
      expect(lstatSync(join(b, 'debs', deb)).ino).toBe(lstatSync(join(dir.path, 'a', 'debs', deb)).ino);
    } finally {
      await layer.release();
      await cache.settle(); // a build that stayed in memory (this test failing) leaves nothing in /dev/shm
    }
  }, 600_000);
  // A full file system under the cache, from a real tmpfs smaller than the tree: mounting one needs root (CI's case).
  it.skipIf(process.getuid?.() !== 0)('is still leased when the cache cannot keep it (its file system full): a warning, nothing half-kept, the folder goes with the lease', async () => {
    expect(inMemory).toBeDefined();
    const full = join(dir.path, 'full');
    mkdirSync(full);
    // Room for the first build's downloads (so nothing is fetched again) and the room the cache checks for
    // before a build (768 MiB for a first layer); once mmdebstrap runs, a file takes all but 16 MiB of it.
    const debsOfA = join(dir.path, 'a', 'debs');
    const debBytes = readdirSync(debsOfA).reduce((n, f) => n + statSync(join(debsOfA, f)).size, 0);
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${Math.ceil(debBytes / 1024 ** 2) + 800}m,mode=0755`, 'tmpfs', full]);
    try {
      mkdirSync(join(full, 'debs'));
      for (const f of readdirSync(debsOfA)) execFileSync('cp', ['-a', join(debsOfA, f), join(full, 'debs', f)]);
      const warnings: string[] = [];
      const cache = new OsLayerCache({ dir: full, onWarning: (m) => warnings.push(m) });
      let filled = false;
      const fill = (p: OsLayerProgress): void => {
        if (filled || p.phase === 'resolving') return;
        filled = true;
        const st = statfsSync(full);
        execFileSync('fallocate', ['-l', String(st.bavail * st.bsize - 16 * 1024 ** 2), join(full, 'filler')]);
      };
      const layer = await cache.acquire(curl, { onProgress: fill });
      try {
        expect(filled).toBe(true);
        expect(layer.dir.startsWith(MEMORY_LAYERS)).toBe(true);
        await cache.settle();
        expect(warnings).toHaveLength(1);
        expect(warnings[0]).toMatch(/was built but could not be kept in the cache .*(ENOSPC|No space left)/);
        expect(await cache.keys()).toEqual([]);
        expect(readdirSync(join(full, 'tmp'))).toEqual([]);
        // The lease is whole: the same entries, modes and owners as the first build's.
        expect(listing(layer.dir, false)).toBe(inMemory.entries);
      } finally {
        await layer.release();
        await cache.settle();
      }
      expect(memoryLayers()).toEqual([]);
    } finally {
      execFileSync('umount', [full]);
    }
  }, 600_000);
});
