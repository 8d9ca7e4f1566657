// The direct-kernel path's reader, on small disks made here by the independent tools (sfdisk for MBR and
// GPT tables, mke2fs -d for the filesystem): what it copies out is byte for byte the image's kernel and
// initramfs, found through their links; a hostile link or a missing file is a clear 'input' error.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BASE_KERNEL_PARAMS } from '../../src/imaging/disk/bootdisk';
import { directCommandLine, FAST_KERNEL_PARAMS, FAST_NETWORK_PARAMS } from '../../src/imaging/boot/fast-params';
import { inspectImage } from '../../src/imaging/boot/image';
import { commandLineOf, extractBootFiles, parseDebugfsStat, resolveLink, rootPartitionOffset } from '../../src/imaging/boot/kernel-files';
import { qemuArgs } from '../../src/imaging/boot/qemu';
import { RULES } from '../../src/model/field-rules';

const work = mkdtempSync(path.join(tmpdir(), 'af-kernel-files-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

interface Disk { readonly file: string; readonly kernel: Buffer; readonly initrd: Buffer }

/** A 64 MiB raw disk: a partition table by sfdisk, one ext4 root made by mke2fs -d from `fill`'s tree. */
function disk(name: string, label: 'dos' | 'gpt', fill: (tree: string) => void): Disk {
  const tree = path.join(work, `${name}-tree`);
  mkdirSync(path.join(tree, 'boot/grub'), { recursive: true });
  const kernel = Buffer.from(`kernel of ${name}\n`.repeat(1000));
  const initrd = Buffer.from(`initrd of ${name}\n`.repeat(3000));
  writeFileSync(path.join(tree, 'boot/vmlinuz-6.1.0-test'), kernel);
  writeFileSync(path.join(tree, 'boot/initrd.img-6.1.0-test'), initrd);
  fill(tree);
  const file = path.join(work, `${name}.raw`);
  writeFileSync(file, '');
  execFileSync('truncate', ['-s', '64M', file]);
  const type = label === 'gpt' ? '0FC63DAF-8483-4772-8E79-3D69D8477DE4' : '83';
  execFileSync('sfdisk', ['-q', file], { input: `label: ${label}\nstart=2048, type=${type}\n` });
  execFileSync('mke2fs', ['-q', '-F', '-t', 'ext4', '-L', 'root', '-d', tree, '-E', `offset=${2048 * 512}`, file, `${(64 - 1) * 1024}k`]);
  return { file, kernel, initrd };
}

const standard = (tree: string): void => {
  symlinkSync('boot/vmlinuz-6.1.0-test', path.join(tree, 'vmlinuz'));
  symlinkSync('boot/initrd.img-6.1.0-test', path.join(tree, 'initrd.img'));
};

describe('reading the kernel out of an image', () => {
  it('MBR and GPT disks: the kernel and initramfs behind their links, and grub.cfg\'s command line', async () => {
    for (const label of ['dos', 'gpt'] as const) {
      const d = disk(`std-${label}`, label, (tree) => {
        standard(tree);
        writeFileSync(path.join(tree, 'boot/grub/grub.cfg'), "set timeout=0\nmenuentry 'Debian' {\n  linux /vmlinuz root=LABEL=root ro console=ttyS0,115200n8 quiet\n  initrd /initrd.img\n}\n");
      });
      const qcow2 = `${d.file}.qcow2`;
      execFileSync('qemu-img', ['convert', '-O', 'qcow2', d.file, qcow2]);
      for (const [image, format] of [[d.file, 'raw'], [qcow2, 'qcow2']] as const) {
        const files = await extractBootFiles(await inspectImage(image, format));
        try {
          expect(readFileSync(files.kernel).equals(d.kernel)).toBe(true);
          expect(readFileSync(files.initrd).equals(d.initrd)).toBe(true);
          expect(files.append).toBe('root=LABEL=root ro console=ttyS0,115200n8 quiet');
        } finally {
          await files.dispose();
        }
        expect(() => readFileSync(files.kernel)).toThrow(/ENOENT/);
      }
    }
  });

  it('no grub.cfg, or one with a word that is not a plain kernel word: the base command line', async () => {
    const none = disk('nocfg', 'dos', standard);
    const files = await extractBootFiles(await inspectImage(none.file));
    expect(files.append).toBe(BASE_KERNEL_PARAMS.join(' '));
    await files.dispose();
    expect(commandLineOf('linux /vmlinuz root=LABEL=root init=/bin/sh;reboot\n')).toBeUndefined();
    expect(commandLineOf('linux /vmlinuz\n')).toBeUndefined();
  });

  it('hostile or missing files are refused with a clear error, and nothing is left behind', async () => {
    const cases: Array<[string, (tree: string) => void, RegExp]> = [
      ['nokernel', (tree) => symlinkSync('boot/initrd.img-6.1.0-test', path.join(tree, 'initrd.img')), /no kernel \(\/vmlinuz\)/],
      ['quoted', (tree) => {
        symlinkSync('boot/vmlinuz 6.1"; rdump / x', path.join(tree, 'vmlinuz'));
        symlinkSync('boot/initrd.img-6.1.0-test', path.join(tree, 'initrd.img'));
      }, /not a regular file or a plain link/],
      ['loop', (tree) => {
        symlinkSync('vmlinuz', path.join(tree, 'vmlinuz'));
        symlinkSync('boot/initrd.img-6.1.0-test', path.join(tree, 'initrd.img'));
      }, /chain of more than 8 links/],
      ['dir', (tree) => {
        mkdirSync(path.join(tree, 'vmlinuz'));
        symlinkSync('boot/initrd.img-6.1.0-test', path.join(tree, 'initrd.img'));
      }, /not a regular file or a plain link/],
    ];
    const before = execFileSync('ls', [tmpdir()], { encoding: 'utf8' }).split('\n').filter((n) => n.startsWith('af-boot-')).length;
    for (const [name, fill, message] of cases) {
      const d = disk(name, 'dos', fill);
      await expect(inspectImage(d.file).then((i) => extractBootFiles(i))).rejects.toMatchObject({ name: 'BootCheckError', kind: 'input', message: expect.stringMatching(message) });
    }
    // A link that climbs out of the filesystem stays inside it, as the kernel resolves it.
    expect(resolveLink('/vmlinuz', '../../../etc/shadow')).toBe('/etc/shadow');
    expect(resolveLink('/boot/vmlinuz', 'vmlinuz-6.1')).toBe('/boot/vmlinuz-6.1');
    const after = execFileSync('ls', [tmpdir()], { encoding: 'utf8' }).split('\n').filter((n) => n.startsWith('af-boot-')).length;
    expect(after).toBe(before);
  });

  it('a disk with no Linux partition, and the parsers on what the tools print', () => {
    expect(() => rootPartitionOffset('{"partitiontable":{"label":"dos","sectorsize":512,"partitions":[{"start":2048,"size":10,"type":"7"}]}}')).toThrow(/no Linux root partition/);
    expect(() => rootPartitionOffset('not json')).toThrow(/no partition table/);
    expect(parseDebugfsStat('/x: File not found by ext2_lookup')).toBeUndefined();
  });

  it('QEMU arguments of the fast path: -kernel/-initrd/-append, a loopback-only forward, multi-threaded TCG', () => {
    const args = qemuArgs({
      image: '/i.qcow2', format: 'qcow2', memoryMiB: 1024, network: 'user', cpus: 2,
      forwards: [{ hostPort: 40001, guestPort: 80 }], kernel: { kernel: '/k', initrd: '/i', append: 'root=LABEL=root ro' },
    });
    expect(args.join(' ')).toContain('-accel tcg,thread=multi -smp 2');
    expect(args.join(' ')).toContain(',hostfwd=tcp:127.0.0.1:40001-:80 -device virtio-net-pci,netdev=net0,romfile=');
    expect(args.join(' ')).toContain('-cpu qemu64,+rdrand');
    expect(args.slice(args.indexOf('-kernel'))).toEqual(['-kernel', '/k', '-initrd', '/i', '-append', 'root=LABEL=root ro']);
  });

  it('the fast-path words follow the image\'s own command line, and none are added when turned off', () => {
    expect(directCommandLine('root=LABEL=root ro', true, false)).toBe(`root=LABEL=root ro ${FAST_KERNEL_PARAMS.join(' ')}`);
    expect(directCommandLine('root=LABEL=root ro', false, false)).toBe('root=LABEL=root ro');
    expect(directCommandLine('root=LABEL=root ro', false, true)).toBe('root=LABEL=root ro');
    // The units that only keep state for the next boot, which a snapshot=on boot never has.
    for (const u of ['systemd-journal-flush.service', 'systemd-random-seed.service', 'systemd-machine-id-commit.service', 'modprobe@efi_pstore.service']) {
      expect(directCommandLine('root=LABEL=root ro', true, false).split(' ')).toContain(`systemd.mask=${u}`);
    }
    // No PATA drivers: the fast path's disk is virtio.
    expect(directCommandLine('root=LABEL=root ro', true, false).split(' ')).toContain('modprobe.blacklist=ata_piix,ata_generic,pata_legacy');
    // Each is a word the declaration's kernel-word rule accepts (the same rule grub.cfg's line is read by).
    for (const w of [...FAST_KERNEL_PARAMS, ...FAST_NETWORK_PARAMS]) expect(RULES.kernelWord.test(w), w).toBe(true);
  });

  it('with a NIC the initramfs sets QEMU\'s DHCP address (ip=, last) and ifupdown\'s networking.service is masked, never without one or over the image\'s own ip= word', () => {
    // QEMU's documented user-network defaults, written out here: the guest 10.0.2.15/24, QEMU at 10.0.2.2, its DNS at 10.0.2.3.
    const ip = 'ip=10.0.2.15::10.0.2.2:255.255.255.0:::off:10.0.2.3';
    expect(FAST_NETWORK_PARAMS).toEqual(['systemd.mask=networking.service', ip]);
    expect(directCommandLine('root=LABEL=root ro', true, true)).toBe(`root=LABEL=root ro ${FAST_KERNEL_PARAMS.join(' ')} systemd.mask=networking.service ${ip}`);
    // QEMU is told the same addresses (net, gateway, DNS, first DHCP address), so the static one is the one its DHCP gives.
    expect(qemuArgs({ image: '/i.qcow2', format: 'qcow2', memoryMiB: 1024, network: 'user' }).join(' '))
      .toContain('-netdev user,id=net0,net=10.0.2.0/24,host=10.0.2.2,dns=10.0.2.3,dhcpstart=10.0.2.15 ');
    // Without a NIC initramfs-tools would wait 180 s for a network device.
    expect(directCommandLine('root=LABEL=root ro', true, false)).not.toContain('ip=');
    expect(directCommandLine('root=LABEL=root ro', true, false)).not.toContain('networking.service');
    const own = 'root=LABEL=root ro ip=10.0.2.15::10.0.2.2:255.255.255.0::eth0:off';
    expect(directCommandLine(own, true, true)).toBe(`${own} ${FAST_KERNEL_PARAMS.join(' ')}`);
    expect(directCommandLine(own, true, true)).not.toContain('networking.service');
    expect(directCommandLine('root=LABEL=root ip=off ro', true, true).split(' ').filter((w) => w.startsWith('ip='))).toEqual(['ip=off']);
    // A word that merely contains ip= is not one.
    expect(directCommandLine('root=LABEL=root ro vip=1', true, true)).toMatch(/ ip=10\.0\.2\.15:\S+$/);
  });
});
