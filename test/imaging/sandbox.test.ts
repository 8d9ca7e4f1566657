// What a build runs, and what a hostile template can no longer reach: the tools that touch a tree run
// as root of a user namespace (a subordinate id, not the host's root); the boot loader is the host's
// GRUB whatever the tree holds (a corrupt kernel.img, a moddep.lst naming a host file, a boot.img
// placed by a software file); declared ids are applied or refused by name.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, openSync, readFileSync, readSync, closeSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { currentSandbox, detectSandbox, hostId, MAPPED_IDS, subordinateRange, unshareArgs } from '../../src/host/sandbox';
import { buildImage, isImagingError } from '../../src/imaging';
import { buildHostOf } from '../../src/imaging/build-host';
import { fakeOs, fakeTree, tempDir } from './tools';

const tmp = tempDir('sandbox');
afterAll(() => tmp.cleanup());
const HOST_BOOT_IMG = '/usr/lib/grub/i386-pc/boot.img';

function head(file: string, bytes: number): Buffer {
  const b = Buffer.alloc(bytes);
  const fd = openSync(file, 'r');
  try {
    readSync(fd, b, 0, bytes, 0);
  } finally {
    closeSync(fd);
  }
  return b;
}

describe('subordinate ranges', () => {
  it('reads /etc/subuid lines by name or uid, and wants the 65536 ids a Debian system uses', () => {
    const text = 'alice:100000:65536\n1001:300000:65536\nbob:200000:1000\n# no\n';
    expect(subordinateRange(text, ['alice'])).toBe(100000);
    expect(subordinateRange(text, ['carol', '1001'])).toBe(300000);
    expect(subordinateRange(text, ['bob'])).toBeUndefined(); // too few ids
    expect(subordinateRange(text, ['dave'])).toBeUndefined();
  });

  it('maps a root server\'s namespace onto its range alone, an ordinary user\'s onto itself then its range', () => {
    const asRoot = { kind: 'userns', self: false, uid0: 100000, gid0: 200000, uidBase: 100000, gidBase: 200000, reason: '' } as const;
    expect(unshareArgs(asRoot)).toEqual(['--map-users=100000,0,65536', '--map-groups=200000,0,65536', '--setuid', '0', '--setgid', '0']);
    expect([hostId(asRoot, 0, 'uid'), hostId(asRoot, 33, 'uid'), hostId(asRoot, 42, 'gid')]).toEqual([100000, 100033, 200042]);
    const asUser = { kind: 'userns', self: true, uid0: 1001, gid0: 1001, uidBase: 165536, gidBase: 165536, reason: '' } as const;
    expect(unshareArgs(asUser)).toEqual(['--map-root-user', '--map-auto']);
    expect([hostId(asUser, 0, 'uid'), hostId(asUser, 1, 'uid'), hostId(asUser, 33, 'gid')]).toEqual([1001, 165536, 165568]);
    expect(() => hostId(asUser, MAPPED_IDS, 'uid')).toThrow(RangeError);
  });

  it('privileged on request, with the reason said', () => {
    expect(detectSandbox('privileged')).toMatchObject({ kind: 'privileged', reason: expect.stringContaining('APPLIANCE_FORGE_SANDBOX=privileged') });
  });
});

// CI runs as root after scripts/prereqs.sh, which gives root a subordinate range: builds are sandboxed there.
const found = currentSandbox();
describe.runIf(found.kind === 'userns')('a tool in the build namespace', () => {
  const s = found.kind === 'userns' ? found : { kind: 'userns', self: false, uid0: -1, gid0: -1, uidBase: -1, gidBase: -1, reason: 'not run' } as const;
  const host = buildHostOf(s);
  it('is root of the namespace and a subordinate id on the host', async () => {
    expect((await host.output('id', ['-u'])).trim()).toBe('0');
    const map = (await host.output('cat', ['/proc/self/uid_map'])).trim().split(/\s+/).map(Number);
    // Root's server: 0…65535 onto its range. An ordinary user: 0 is the user itself, 1…65535 its range.
    expect(map).toEqual(s.self ? [0, s.uid0, 1, 1, s.uidBase, MAPPED_IDS - 1] : [0, hostId(s, 0, 'uid'), MAPPED_IDS]);
    expect(hostId(s, 0, 'uid')).toBeGreaterThan(0); // not the host's root
  });

  it('cannot write a file of the host root, even through a path that leaves the tree', async () => {
    // As root, a file made here belongs to the host's root; an ordinary user's namespace root is the
    // user itself, so its canary is a file of the host's root that exists already.
    const canary = s.self ? '/etc/hostname' : join(tmp.path, 'host-owned');
    if (!s.self) writeFileSync(canary, 'host');
    const before = readFileSync(canary, 'utf8');
    const e = await host.output('sh', ['-c', `echo changed > ${canary}`]).catch((x: unknown) => x);
    expect(isImagingError(e, 'tool')).toBe(true);
    expect(readFileSync(canary, 'utf8')).toBe(before);
    expect(existsSync('/etc/af-sandbox-canary')).toBe(false);
    await host.output('sh', ['-c', 'touch /etc/af-sandbox-canary 2>/dev/null; true']);
    expect(existsSync('/etc/af-sandbox-canary')).toBe(false);
  });
});

describe('the boot loader comes from the host, never from the tree', () => {
  it('a corrupt kernel.img, a moddep.lst naming a host file and a boot.img among the software files change nothing', async () => {
    const tree = fakeTree(join(tmp.path, 'hostile'));
    // A template's GRUB files in its tree (they used to be read by the host's grub-mkimage).
    const grub = join(tree, 'usr/lib/grub/i386-pc');
    mkdirSync(grub, { recursive: true });
    writeFileSync(join(grub, 'kernel.img'), randomBytes(40_000));
    const canary = join(tmp.path, 'canary.mod');
    const secret = randomBytes(4096);
    writeFileSync(canary, secret);
    writeFileSync(join(grub, 'moddep.lst'), `normal: ${canary}\nlinux: ${canary}\n`);
    const s = currentSandbox();
    execFileSync('chown', ['-R', `${hostId(s, 0, 'uid')}:${hostId(s, 0, 'gid')}`, grub]);
    // A software file that would set the disk's first bytes: a qcow2 header naming a host backing file.
    const qcow = join(tmp.path, 'evil.qcow2');
    execFileSync('qemu-img', ['create', '-q', '-f', 'qcow2', '-b', '/etc/passwd', '-F', 'raw', qcow]);
    const out = join(tmp.path, 'hostile.raw');
    await buildImage({
      ...fakeOs(tree), disk: 'raw', compress: false, manifest: '{}', outFile: out, workDir: join(tmp.path, 'work'),
      files: [{ source: qcow, destination: '/usr/lib/grub/i386-pc/boot.img' }],
    });
    const disk = head(out, 1024 * 1024);
    // The host's boot.img, but for the two fields GRUB's install patches (real-images.md): the kernel sector at 0x5c
    // (8 bytes) and the drive check at 0x66 (2 bytes).
    const host = Buffer.from(readFileSync(HOST_BOOT_IMG).subarray(0, 440));
    const code = Buffer.from(disk.subarray(0, 440));
    for (const [at, n] of [[0x5c, 8], [0x66, 2]] as const) {
      host.fill(0, at, at + n);
      code.fill(0, at, at + n);
    }
    expect(code.equals(host)).toBe(true);
    expect(disk.subarray(0, 4).toString('latin1')).not.toBe('QFI\xfb');
    expect(disk.includes(secret.subarray(0, 64))).toBe(false); // no host file in the boot area
    expect(JSON.parse(execFileSync('qemu-img', ['info', '--output=json', '-f', 'raw', out], { encoding: 'utf8' })) as { format: string }).toMatchObject({ format: 'raw' });
  }, 120_000);
});

describe('declared ids', () => {
  it('a uid already taken in the OS is an input error naming both users, before anything is written', async () => {
    const tree = fakeTree(join(tmp.path, 'ids'));
    const os = fakeOs(tree);
    const out = join(tmp.path, 'ids.raw');
    const e = await buildImage({
      ...os, settings: { ...os.settings, users: [{ name: 'carol', uid: 0, secondaryGroups: [], sshKeys: [] }] },
      disk: 'raw', compress: false, manifest: '{}', outFile: out, workDir: join(tmp.path, 'work-ids'), files: [],
    }).catch((x: unknown) => x);
    expect(isImagingError(e, 'input')).toBe(true);
    expect((e as Error).message).toBe('uid 0 of user carol is already taken by user root in the OS');
    expect(existsSync(out)).toBe(false);
  });

  it('a gid already taken by another group is refused the same way', async () => {
    const tree = fakeTree(join(tmp.path, 'gids'));
    const os = fakeOs(tree);
    const e = await buildImage({
      ...os, settings: { ...os.settings, groups: [{ name: 'ops', gid: 1500, system: false }] },
      disk: 'raw', compress: false, manifest: '{}', outFile: join(tmp.path, 'gids.raw'), workDir: join(tmp.path, 'work-gids'), files: [],
    }).catch((x: unknown) => x);
    expect((e as Error).message).toBe('gid 1500 of group ops is already taken by group web in the OS');
  });
});
