// Each owner's builds in an id range of their own (host/owner-ranges.ts), as a shared server running as
// root gives them: ranges picked like systemd-nspawn's --private-users=pick from a pool in /etc/subuid
// and /etc/subgid, one owner's namespace root unable to touch another's files, the layer's tree copied
// across with the image's ids, and two owners' builds of one order giving the same bytes.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { leaseRange, ownerSandbox, poolOf, rangePool, slotOfUid } from '../../src/host/owner-ranges';
import { currentSandbox, MAPPED_IDS } from '../../src/host/sandbox';
import { defaultMirror, imageBuilder, isImagingError, type ImageOrder } from '../../src/imaging';
import { currentBuildHost, type BuildHost, type OwnerHost } from '../../src/imaging/build-host';
import { copyAcross } from '../../src/imaging/os/layer-archive';
import { descendsFrom, tempDir } from './tools';

const tmp = tempDir('owner-ranges');
afterAll(() => tmp.cleanup());

describe('the pool and the pick', () => {
  const subuid = 'root:100000:65536\nbob:165536:65536\nroot:231072:16777216\nroot:9000000:65536\n';
  const subgid = 'root:165536:65536\nroot:17008288:1048576\n';

  it("is root's largest entry of at least 16 ranges beside the builds' own, in each file", () => {
    expect(rangePool(subuid, subgid, ['root', '0'], { uidBase: 100000, gidBase: 165536 })).toEqual({ uidBase: 231072, gidBase: 17008288, ranges: 16 });
    // No pool in one file: none at all (and never the builds' own range).
    expect(rangePool(subuid, 'root:165536:65536\n', ['root'], { uidBase: 100000, gidBase: 165536 })).toBeUndefined();
    expect(rangePool('root:231072:16777216\n', 'root:17008288:16777216\n', ['root'], { uidBase: 231072, gidBase: 17008288 })).toBeUndefined();
  });

  it('gives an owner its range again, another owner another, a range no running build holds to a new owner, and names a full pool', async () => {
    const pool = { uidBase: 231072, gidBase: 17008288, ranges: 16 };
    const registry = join(tmp.path, 'registry');
    const alice = await leaseRange('alice', pool, registry);
    const again = await leaseRange('alice', pool, registry);
    expect(again.slot).toBe(alice.slot);
    const others = await Promise.all(Array.from({ length: 15 }, (_, i) => leaseRange(`user${i}`, pool, registry)));
    expect(new Set([alice.slot, ...others.map((l) => l.slot)]).size).toBe(16);
    await expect(leaseRange('one-too-many', pool, registry)).rejects.toThrow(/all 16 of the pool are in use by running builds/);
    expect(readFileSync(join(registry, String(alice.slot), 'owner'), 'utf8')).toBe('alice');
    // alice's two builds end: her range serves the next owner; a lease of a dead process holds nothing.
    await alice.release();
    await expect(leaseRange('one-too-many', pool, registry)).rejects.toThrow(/in use/);
    await again.release();
    writeFileSync(join(registry, String(others[0]!.slot), 'leases', '999999999.1-1'), '');
    await others[0]!.release();
    const next = await leaseRange('one-too-many', pool, registry);
    expect([alice.slot, others[0]!.slot]).toContain(next.slot);
    expect(readFileSync(join(registry, String(next.slot), 'owner'), 'utf8')).toBe('one-too-many');
    const sandbox = ownerSandbox(pool, next.slot);
    expect(sandbox).toMatchObject({ kind: 'userns', self: false, uidBase: 231072 + next.slot * MAPPED_IDS, gidBase: 17008288 + next.slot * MAPPED_IDS });
    expect(slotOfUid(pool, sandbox.uidBase + 5)).toBe(next.slot);
    expect(slotOfUid(pool, 100000)).toBeUndefined();
  });
});

const host = currentBuildHost();
// A server running as root with a pool (scripts/prereqs.sh build adds one); anywhere else every owner builds as the server does.
const why = poolOf(currentSandbox()) === undefined ? 'no pool of ranges for owners here (a server running as root with one: scripts/prereqs.sh build)' : undefined;
if (why) console.warn(`SKIP owners' own ranges: ${why}`);

describe.skipIf(why !== undefined)('owners on this host', () => {
  // Held while the file runs, as a build holds its owner's range.
  let alice: BuildHost;
  let bob: BuildHost;
  const held: OwnerHost[] = [];
  beforeAll(async () => {
    held.push(await host.leaseOwner('test-owner-alice'), await host.leaseOwner('test-owner-bob'));
    [alice, bob] = held.map((h) => h.host) as [BuildHost, BuildHost];
  });
  afterAll(async () => {
    for (const h of held) await h.release();
  });

  describe("their namespaces", () => {
    it('are apart: an owner\'s root cannot write or remove what another\'s made', async () => {
      expect(new Set([host.owners, alice.owners, bob.owners]).size).toBe(3);
      const dir = join(tmp.path, 'alice-tree');
      mkdirSync(dir);
      await alice.own(dir);
      await alice.run('sh', ['-c', `echo mine > '${dir}/file' && chmod 0644 '${dir}/file'`]);
      expect(statSync(join(dir, 'file')).uid).toBe(alice.hostId(0, 'uid'));
      for (const script of [`echo theirs > '${dir}/file'`, `rm -f '${dir}/file'`, `touch '${dir}/new'`]) {
        const e = await bob.run('sh', ['-c', script]).then(() => undefined, (err: unknown) => err);
        expect(isImagingError(e), script).toBe(true);
      }
      expect(readFileSync(join(dir, 'file'), 'utf8')).toBe('mine\n');
    });

    it("copies a tree of the builds' namespace into an owner's with the image's ids", async () => {
      const src = join(tmp.path, 'layer');
      mkdirSync(src);
      await host.own(src);
      await host.run('sh', ['-c', `mkdir '${src}/etc' && echo x > '${src}/etc/f' && chown 42:7 '${src}/etc/f' && chmod 0640 '${src}/etc/f' && ln -s etc/f '${src}/link'`]);
      const dest = join(tmp.path, 'copy');
      mkdirSync(dest);
      await alice.own(dest);
      await copyAcross(src, host, dest, alice);
      const st = statSync(join(dest, 'etc/f'));
      expect([st.uid, st.gid, st.mode & 0o7777]).toEqual([alice.hostId(42, 'uid'), alice.hostId(7, 'gid'), 0o640]);
      expect(execFileSync('readlink', [join(dest, 'link')], { encoding: 'utf8' }).trim()).toBe('etc/f');
    });
  });

  describe("two owners' builds of one order", () => {
    /** The uids of running processes whose command is one of `names`, read from /proc. */
    function uidsOf(names: readonly string[]): number[] {
      const out: number[] = [];
      for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d) && descendsFrom(Number(d)))) {
        try {
          const status = readFileSync(`/proc/${pid}/status`, 'utf8');
          const name = /^Name:\s*(\S+)/m.exec(status)?.[1];
          if (name !== undefined && names.includes(name)) out.push(Number(/^Uid:\s*(\d+)/m.exec(status)?.[1]));
        } catch {
          // exited meanwhile
        }
      }
      return out;
    }

    it("run the disk stage's tools in each owner's range, and give the same bytes", async () => {
      const builder = imageBuilder();
      const os = { suite: 'bookworm', arch: 'amd64', profile: 'Minimal', packages: [], kernel: 'cloud', cloudInit: false, mirror: defaultMirror() } as const;
      // A software file: debugfs writes it in every build (a base disk of an earlier run may come from the cache).
      const source = join(tmp.path, 'tool.sh');
      writeFileSync(source, '#!/bin/sh\necho tool\n');
      const order = (owner: string, outFile: string): ImageOrder => ({
        owner, outFile, files: [{ source, destination: '/opt/owners/tool.sh', rights: '0755' }],
        recipe: { os, disk: 'raw', compress: false, reproducible: true, manifest: { template: { name: 'owners', version: '1', revision: 1 }, os: {}, profile: { name: 'Minimal', standardProfileUri: '' }, software: [], installProfile: {}, targetFormat: 'Raw' } },
        settings: { hostname: 'owners', diskMiB: 2048, swapMiB: 0, kernelParams: [], rootUser: { disablePasswordLogin: true, sshKeys: [] }, users: [], groups: [] },
      });
      const digests: string[] = [];
      for (const [who, owner] of [[alice, 'test-owner-alice'], [bob, 'test-owner-bob']] as const) {
        const seen = new Set<number>();
        const watch = setInterval(() => uidsOf(['mke2fs', 'tar', 'debugfs', 'useradd', 'groupadd']).forEach((u) => seen.add(u)), 20);
        const out = join(tmp.path, `${owner}.raw`);
        try {
          await builder.build(order(owner, out), new AbortController().signal, () => undefined);
        } finally {
          clearInterval(watch);
        }
        // The owner's namespace root ran them, never the other owner's (the watch sees every process of the
        // host: other files' builds run beside this one, under their own owners).
        const other = who === alice ? bob : alice;
        expect([...seen]).toContain(who.hostId(0, 'uid'));
        expect([...seen]).not.toContain(other.hostId(0, 'uid'));
        digests.push(execFileSync('sha256sum', [out], { encoding: 'utf8' }).split(' ')[0]!);
      }
      await builder.settle();
      expect(digests[1]).toBe(digests[0]);
    }, 900_000);
  });
});
