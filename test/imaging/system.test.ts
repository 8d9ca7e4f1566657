// Stages 2 and 3 of a real image build on a real OS layer (bookworm Minimal + nginx + openssh-server,
// built by mmdebstrap through the shared layer cache): the settings applied to a copy of the tree,
// read back with the image's own tools (chroot getent/id/passwd, stat), the disk read back with
// sfdisk, blkid and debugfs, and ONE boot of the qcow2 under QEMU TCG through src/imaging/boot,
// logged in over the serial console as the declared user with the declared password.
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootCheck } from '../../src/imaging/boot';
import { currentSandbox, hostId, sandboxPrefix } from '../../src/host/sandbox';
import { applySystem, buildImage, isImagingError, type SystemSettings } from '../../src/imaging';
import { buildHostOf } from '../../src/imaging/build-host';
import { GPT_TYPE, ROOT_OFFSET } from '../../src/imaging/disk/gpt';
import { MANIFEST_PATH } from '../../src/imaging/system/staging';
import { copyTree } from '../../src/imaging/tree';
import { buildOsLayer, type OsLayer } from '../../src/imaging/os';
import { removeTree } from '../../src/imaging/os/mmdebstrap';
import { requireBuildPrerequisites, scratch, spec, TEST_CACHE } from './os/helpers';
import { debugfsCat, debugfsStat, e2fsck, partitionTable, qemuCheck, toRaw } from './tools';

const PASSWORD = 'Alice-pw-7'; // a throwaway test password: only its hash (openssl, not the code under test) is given
const HASH = execFileSync('openssl', ['passwd', '-6', '-salt', 'afsystemtest', PASSWORD], { encoding: 'utf8' }).trim();
const KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB0lUJ3d7ypZ3PUqo6mO5DLiWJ1JtdNPCvkcD0nYvTz2 alice@test';
const ROOT_KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPqyW5Q8W0PtmCLpw1v3uFcYz9eM7tB3SxKQfIh3H6mN root@test';
const manifest = JSON.stringify({ name: 'web', version: '1.0' });

const settings: SystemSettings = {
  hostname: 'web-01',
  diskMiB: 2048,
  swapMiB: 64,
  timezone: 'Europe/Paris',
  keyboard: { layout: 'fr', variant: 'oss' },
  kernelParams: ['quiet', 'systemd.show_status=1'],
  rootUser: { disablePasswordLogin: true, sshKeys: [{ publicKey: ROOT_KEY }] },
  groups: [{ name: 'web', gid: 1500, system: false }, { name: 'ops', system: true }],
  users: [
    { name: 'alice', fullName: 'Alice Doe', primaryGroup: 'web', secondaryGroups: ['ops', 'adm'], passwordHash: HASH, sshKeys: [{ publicKey: KEY }] },
    { name: 'bob', homeDir: '/srv/bob', shell: '/bin/sh', secondaryGroups: [], sshKeys: [] },
  ],
  welcomeMessage: 'Welcome to web-01',
};

let layer: OsLayer;
const tmp = scratch('system');
let files: { source: string; destination: string; rights?: string; ownerGroup?: string }[];

beforeAll(async () => {
  requireBuildPrerequisites();
  layer = await buildOsLayer(spec({ packages: [{ name: 'nginx' }, { name: 'openssh-server' }] }), { cacheDir: TEST_CACHE });
  writeFileSync(join(tmp.path, 'tool'), '#!/bin/sh\necho tool\n');
  writeFileSync(join(tmp.path, 'app.conf'), 'listen 8080;\n');
  writeFileSync(join(tmp.path, 'web.conf'), 'server { listen 8080; return 200 "web\\n"; }\n'); // valid in nginx's http block
  files = [
    { source: join(tmp.path, 'tool'), destination: '/opt/web/bin/tool', rights: '0750', ownerGroup: 'alice:web' },
    // /lib is a symlink to usr/lib in the OS: the file goes where the image will see it.
    { source: join(tmp.path, 'app.conf'), destination: '/lib/web/app.conf', rights: '0640', ownerGroup: 'bob' },
    { source: join(tmp.path, 'web.conf'), destination: '/etc/nginx/conf.d/web.conf', ownerGroup: 'root:www-data' },
  ];
}, 900_000);
afterAll(async () => {
  await layer?.release();
  // An ordinary user's trees hold files of its subordinate ids: removed from inside its namespace.
  await removeTree(join(tmp.path, 'trees'));
  tmp.cleanup();
});

// The tree's owners are the build's namespace ids: read it back from inside the same namespace.
const sandbox = currentSandbox();
const host = buildHostOf(sandbox);
/** Where the copies of the layer go: a folder the namespace's root may write (cp runs as that root). */
const trees = (): string => {
  const dir = join(tmp.path, 'trees');
  if (!existsSync(dir)) {
    mkdirSync(dir);
    chownSync(dir, hostId(sandbox, 0, 'uid'), hostId(sandbox, 0, 'gid'));
  }
  return dir;
};
const sh = (tree: string, ...args: string[]): string => {
  const [cmd, ...argv] = [...sandboxPrefix(sandbox), 'chroot', tree, ...args];
  return execFileSync(cmd!, argv, { encoding: 'utf8' }).trim();
};

// An ordinary user's build applies the system inside its namespace child (in-namespace.ts), never in
// this process: applySystem called here needs root over the tree. The ordinary user's path is the
// bootable qcow2 below and test/e2e/ordinary-user.test.ts.
describe.skipIf(sandbox.kind === 'userns' && sandbox.self)('applySystem on a copy of the OS layer (root: an ordinary user applies it in its namespace child)', () => {
  let tree: string;
  beforeAll(async () => {
    tree = join(trees(), 'tree');
    await copyTree(layer.dir, tree, host);
    await applySystem(tree, { settings, files, manifest, cloudInit: false, host });
  }, 600_000);

  it('creates the groups and users as declared', () => {
    expect(sh(tree, 'getent', 'group', 'web')).toBe('web:x:1500:');
    expect(Number(sh(tree, 'getent', 'group', 'ops').split(':')[2])).toBeLessThan(1000); // a system group
    const alice = sh(tree, 'getent', 'passwd', 'alice').split(':');
    expect(alice[3]).toBe('1500');
    expect(alice.slice(4)).toEqual(['Alice Doe', '/home/alice', '/bin/bash']);
    expect(sh(tree, 'id', '-Gn', 'alice').split(' ').sort()).toEqual(['adm', 'ops', 'web']);
    expect(sh(tree, 'getent', 'passwd', 'bob').split(':').slice(5)).toEqual(['/srv/bob', '/bin/sh']);
    expect(sh(tree, 'id', '-gn', 'bob')).toBe('bob');
    expect(sh(tree, 'stat', '-c', '%U:%G', '/home/alice', '/srv/bob').split('\n')).toEqual(['alice:web', 'bob:bob']);
  });

  it('sets passwords from the hashes only, locks root, and writes the ssh keys with strict modes', () => {
    expect(sh(tree, 'getent', 'shadow', 'alice').split(':')[1]).toBe(HASH);
    expect(sh(tree, 'passwd', '-S', 'root').split(' ')[1]).toBe('L');
    expect(sh(tree, 'passwd', '-S', 'bob').split(' ')[1]).toBe('L'); // no hash given: no password login
    expect(readFileSync(join(tree, 'home/alice/.ssh/authorized_keys'), 'utf8')).toBe(`${KEY}\n`);
    expect(readFileSync(join(tree, 'root/.ssh/authorized_keys'), 'utf8')).toBe(`${ROOT_KEY}\n`);
    expect(sh(tree, 'stat', '-c', '%U:%G %a', '/home/alice/.ssh', '/home/alice/.ssh/authorized_keys', '/root/.ssh/authorized_keys').split('\n'))
      .toEqual(['alice:web 700', 'alice:web 600', 'root:root 600']);
    expect(readFileSync(join(tree, 'etc/ssh/sshd_config.d/appliance-forge.conf'), 'utf8')).toContain('PermitRootLogin prohibit-password');
    expect(execFileSync('sh', ['-c', `ls ${tree}/etc/ssh | grep -c ssh_host_ || true`], { encoding: 'utf8' }).trim()).toBe('0');
  });

  it('writes the host settings', () => {
    expect(readFileSync(join(tree, 'etc/hostname'), 'utf8')).toBe('web-01\n');
    expect(readFileSync(join(tree, 'etc/hosts'), 'utf8')).toMatch(/^127\.0\.1\.1\s+web-01$/m);
    expect(readFileSync(join(tree, 'etc/fstab'), 'utf8')).toMatch(/^LABEL=root\s+\/\s+ext4\s/m);
    expect(readlinkSync(join(tree, 'etc/localtime'))).toBe('/usr/share/zoneinfo/Europe/Paris');
    expect(readFileSync(join(tree, 'etc/timezone'), 'utf8')).toBe('Europe/Paris\n');
    expect(readFileSync(join(tree, 'etc/default/keyboard'), 'utf8')).toMatch(/XKBLAYOUT="fr"\nXKBVARIANT="oss"/);
    expect(readFileSync(join(tree, 'etc/motd'), 'utf8')).toBe('Welcome to web-01\n');
    expect(readFileSync(join(tree, 'etc/network/interfaces.d/eth0'), 'utf8')).toContain('iface eth0 inet dhcp');
    expect(readFileSync(join(tree, 'etc/machine-id'), 'utf8')).toBe('');
  });

  it('places the files with their rights and owners, through the OS own symlinks', () => {
    expect(sh(tree, 'stat', '-c', '%U:%G %a', '/opt/web/bin/tool', '/usr/lib/web/app.conf', '/etc/nginx/conf.d/web.conf', MANIFEST_PATH).split('\n'))
      .toEqual(['alice:web 750', 'bob:bob 640', 'root:www-data 644', 'root:root 644']);
    expect(lstatSync(join(tree, 'lib')).isSymbolicLink()).toBe(true);
    expect(readFileSync(join(tree, MANIFEST_PATH.slice(1)), 'utf8')).toBe(manifest);
  });

  it('keeps a hostile symlink of the tree inside the tree, and names an unknown owner', async () => {
    const evil = join(trees(), 'evil');
    await copyTree(layer.dir, evil, host);
    const outside = join(tmp.path, 'outside');
    mkdirSync(outside);
    symlinkSync(`../../../../../../../..${outside}`, join(evil, 'opt', 'escape'));
    writeFileSync(join(outside, 'target'), 'outside');
    symlinkSync(join(outside, 'target'), join(evil, 'opt', 'link')); // a destination that is itself a link out of the tree
    await applySystem(evil, {
      settings: { ...settings, users: [], groups: [], rootUser: { disablePasswordLogin: false, sshKeys: [] } },
      files: [{ source: join(tmp.path, 'tool'), destination: '/opt/escape/x' }, { source: join(tmp.path, 'tool'), destination: '/opt/link' }],
      manifest, cloudInit: true, host,
    });
    expect(existsSync(join(outside, 'x'))).toBe(false);
    expect(readFileSync(join(outside, 'target'), 'utf8')).toBe('outside'); // replaced in the tree, not written through
    expect(lstatSync(join(evil, 'opt', 'link')).isFile()).toBe(true);
    expect(existsSync(join(evil, outside.slice(1), 'x'))).toBe(true); // `..` stopped at the image's root
    expect(existsSync(join(evil, 'etc/network/interfaces.d/eth0'))).toBe(false); // cloud-init's job

    const e = await applySystem(evil, { settings: { ...settings, users: [], groups: [] }, files: [{ source: join(tmp.path, 'tool'), destination: '/opt/t', ownerGroup: 'nobody-here:web' }], manifest, cloudInit: true, host }).catch((x: unknown) => x);
    expect(isImagingError(e, 'input') && e.message).toContain('nobody-here');
  }, 600_000);
});

describe('buildImage: a bootable qcow2', () => {
  it('has an active partition labelled root with the files, and boots to a login as the declared user', async () => {
    const out = join(tmp.path, 'web.qcow2');
    const reports: number[] = [];
    const r = await buildImage({
      layerDir: layer.dir, settings, cloudInit: false, disk: 'qcow2', compress: false, files, manifest,
      outFile: out, workDir: join(tmp.path, 'work'), progressRange: { from: 40, to: 100 }, onProgress: (p) => reports.push(p.percentage),
    });
    expect(r.virtualSizeBytes).toBe(2048 * 1024 * 1024);
    console.log(`bootable qcow2 (Minimal + nginx + openssh-server, 2 GiB disk): ${(r.fileSize / 1048576).toFixed(1)} MiB`);
    expect(reports[0]).toBeGreaterThanOrEqual(40);
    expect(reports.at(-1)).toBe(100);
    expect(qemuCheck(out, 'qcow2').status).toBe(0);

    const raw = toRaw(out, 'qcow2', join(tmp.path, 'web.raw'));
    expect(partitionTable(raw).partitions.map((p) => p.type)).toEqual([GPT_TYPE.biosBoot, GPT_TYPE.esp, GPT_TYPE.root]);
    expect(execFileSync('blkid', ['-p', '-O', String(ROOT_OFFSET), '-s', 'LABEL', '-o', 'value', raw], { encoding: 'utf8' }).trim()).toBe('root');
    expect(e2fsck(raw).status).toBe(0);
    // boot.img's code up to its kernel sector field (which, with the drive check, the build sets).
    expect(execFileSync('dd', [`if=${raw}`, 'bs=1', 'count=92', 'status=none']).equals(readFileSync('/usr/lib/grub/i386-pc/boot.img').subarray(0, 0x5c))).toBe(true);
    const grub = debugfsCat(raw, '/boot/grub/grub.cfg').toString();
    expect(grub).toContain('search --no-floppy --label root --set=root');
    expect(grub).toContain('linux /vmlinuz root=LABEL=root ro console=tty0 console=ttyS0,115200n8 net.ifnames=0 quiet systemd.show_status=1');
    // alice's uid as the image's own /etc/passwd has it (the tree of the block above is root's only).
    const uid = Number(debugfsCat(raw, '/etc/passwd').toString().split('\n').find((l) => l.startsWith('alice:'))?.split(':')[2]);
    expect(uid).toBeGreaterThan(0);
    expect(debugfsStat(raw, '/opt/web/bin/tool')).toMatchObject({ type: 'regular', mode: 0o750, uid, gid: 1500 });

    const boot = await bootCheck({
      image: out, format: 'qcow2', timeoutMs: 600_000, login: { user: 'alice', password: PASSWORD },
      commands: [
        'hostname',
        // No D-Bus in a Minimal system: systemctl needs root; the daemons' processes say as much. sshd may still be
        // making its host keys; on failure, its journal (readable by adm) says why.
        'for i in $(seq 120); do pidof -q sshd && pidof -q nginx && break; sleep 1; done; pidof -q nginx && echo nginx || journalctl -b -u nginx --no-pager | tail -5; pidof -q sshd && echo sshd || journalctl -b -u ssh --no-pager | tail -5',
        'cat /proc/swaps | grep -c /swapfile',
        'readlink /etc/localtime',
        'stat -c "%U:%G %a" /opt/web/bin/tool /usr/lib/web/app.conf',
        'id -Gn | tr " " "\\n" | sort | tr "\\n" " "',
        'ls /etc/ssh | grep -c "ssh_host_.*_key$"',
        'cat /proc/cmdline',
        'test -s /etc/machine-id && echo machine-id set',
      ],
    });
    expect(boot.reachedLogin, boot.consoleTail).toBe(true);
    expect(boot.loggedIn, boot.consoleTail).toBe(true);
    const outs = (boot.results ?? []).map((c) => `${c.exitCode}:${c.output.trim()}`);
    expect(outs).toEqual([
      '0:web-01',
      '0:nginx\nsshd',
      '0:1',
      '0:/usr/share/zoneinfo/Europe/Paris',
      '0:alice:web 750\nbob:bob 640',
      '0:adm ops web',
      expect.stringMatching(/^0:[1-9]$/),
      expect.stringContaining('console=ttyS0,115200n8 net.ifnames=0 quiet'),
      '0:machine-id set',
    ]);
  }, 1_800_000);
});
