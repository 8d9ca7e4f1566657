// What every build shares (the OS layers, the kept .deb files, the base disks) a build's disk stage
// can read but not change: the handle its tools run through (BuildHost.readOnly, which imageBuilder
// hands to the disk stage) binds those folders read-only in a mount namespace of the host's root,
// before the tools enter their user namespace. Checked with the namespace's own root trying to write,
// remove, remount and unmount, against the same commands through the plain handle, which can.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultMirror, imageBuilder, isImagingError } from '../../src/imaging';
import { currentBuildHost, type BuildHost } from '../../src/imaging/build-host';
import { descendsFrom, tempDir } from './tools';

const host = currentBuildHost();
// Only a server running as root with a subordinate range draws the line (the host's root, or an
// ordinary user's own namespace, has nothing above it to lock a mount with).
const why = !host.namespaced ? 'builds run as the host root here (no user namespace)' : host.ownNamespace ? "an ordinary user's own namespace: its root is that user" : undefined;
if (why) console.warn(`SKIP read-only shared folders: ${why}`);

describe.skipIf(why !== undefined)('the shared folders, read-only to a build', () => {
  const tmp = tempDir('read-only');
  afterAll(() => tmp.cleanup());
  const shared = join(tmp.path, 'layers');
  const file = join(shared, 'tree', 'hostname');
  const work = join(tmp.path, 'work');
  let guarded: BuildHost;

  beforeAll(async () => {
    mkdirSync(join(shared, 'tree'), { recursive: true });
    mkdirSync(work);
    writeFileSync(file, 'layer\n');
    // Owned by the namespace's root, as a layer's tree is: nothing but the mount stops it.
    for (const p of [shared, join(shared, 'tree'), file, work]) await host.own(p);
    guarded = host.readOnly([shared, join(tmp.path, 'no-such-folder')]);
  });

  const failure = (h: BuildHost, script: string): Promise<unknown> => h.run('sh', ['-c', script]).then(() => undefined, (e: unknown) => e);

  it('the plain handle writes there (the namespace root owns the files)', async () => {
    await host.run('sh', ['-c', `echo plain >> '${file}'`]);
    expect(readFileSync(file, 'utf8')).toBe('layer\nplain\n');
    writeFileSync(file, 'layer\n');
  });

  it('the read-only handle cannot write, remove, remount or unmount them; the file stays as it was', async () => {
    for (const script of [`echo x > '${file}'`, `rm -f '${file}'`, `touch '${shared}/new'`, `mount -o remount,rw '${shared}' && echo x > '${file}'`, `umount '${shared}' && echo x > '${file}'`]) {
      const e = await failure(guarded, script);
      expect(isImagingError(e), script).toBe(true);
    }
    const e = await failure(guarded, `echo x > '${file}'`);
    expect((e as Error).message).toMatch(/Read-only file system/);
    expect(readFileSync(file, 'utf8')).toBe('layer\n');
    // It still reads them, and writes its own work folder.
    expect(await guarded.output('cat', [file])).toBe('layer\n');
    await guarded.run('sh', ['-c', `cp '${file}' '${work}/copy'`]);
    expect(readFileSync(join(work, 'copy'), 'utf8')).toBe('layer\n');
  });

  it('the mounts were the namespace\'s own: the host sees no mount there and still writes', () => {
    const mounts = execFileSync('findmnt', ['-rn', '-o', 'TARGET'], { encoding: 'utf8' }).split('\n');
    expect(mounts).not.toContain(shared);
    writeFileSync(file, 'host\n');
    expect(readFileSync(file, 'utf8')).toBe('host\n');
  });
});

describe.skipIf(why !== undefined)('a real build through the image builder', () => {
  const tmp = tempDir('read-only-build');
  afterAll(() => tmp.cleanup());

  /** The folders each `mount --bind -o ro DIR DIR` of a running process names, read from /proc. */
  function readOnlyBinds(): string[] {
    const out: string[] = [];
    for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d) && descendsFrom(Number(d)))) {
      let argv: string[];
      try {
        argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      } catch {
        continue; // exited meanwhile
      }
      // unshare … -- sh -c SCRIPT sh DIR… -- the tool: the folders sit between `sh` and `--`.
      const script = argv.findIndex((a) => a.includes('mount --bind -o ro'));
      if (script < 0 || argv[script + 1] !== 'sh') continue;
      const end = argv.indexOf('--', script + 2);
      out.push(...argv.slice(script + 2, end));
    }
    return out;
  }

  it("runs the disk stage's tools with the layers, the .deb files and the base disks read-only (the suite's warm Debian 12 layer)", async () => {
    const builder = imageBuilder();
    const seen = new Set<string>();
    const watch = setInterval(() => readOnlyBinds().forEach((d) => seen.add(d)), 20);
    try {
      const os = { suite: 'bookworm', arch: 'amd64', profile: 'Minimal', packages: [], kernel: 'cloud', cloudInit: false, mirror: defaultMirror() } as const;
      await builder.build({
        recipe: { os, disk: 'raw', compress: false, manifest: { template: { name: 'ro', version: '1', revision: 1 }, os: {}, profile: { name: 'Minimal', standardProfileUri: '' }, software: [], installProfile: {}, targetFormat: 'Raw' } },
        settings: { hostname: 'ro', diskMiB: 2048, swapMiB: 0, kernelParams: [], rootUser: { disablePasswordLogin: true, sshKeys: [] }, users: [], groups: [] },
        files: [],
        outFile: join(tmp.path, 'ro.raw'),
      }, new AbortController().signal, () => undefined);
    } finally {
      clearInterval(watch);
      await builder.settle();
    }
    const os = builder.cacheDir;
    expect([...seen]).toEqual(expect.arrayContaining([join(os, 'layers'), join(os, 'debs')]));
    // The leased layer's own tree, wherever it lives (the cache, or /dev/shm when built in memory).
    expect([...seen].some((d) => d.endsWith('/tree'))).toBe(true);
  }, 600_000);
});
