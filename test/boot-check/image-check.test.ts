// What `boot` accepts and refuses before QEMU starts, on images made by qemu-img, dd and printf
// (vectors.ts), and what QEMU then opens, asked of QEMU itself (qmp.ts: -S, no guest runs). Seconds.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isBootCheckError, type ImageFormat } from '../../src/imaging/boot';
import { checkImage } from '../../src/imaging/boot/image';
import { qemuArgs, startQemu } from '../../src/imaging/boot/qemu';
import { cliBundle, runCli } from '../cli/helpers/cli';
import { openedByQemu } from './qmp';
import { loopingDisk, patch, qemuImg, rawWithQcow2Header, vmdkWithExtent } from './vectors';

const work = mkdtempSync(path.join(tmpdir(), 'af-image-check-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const at = (name: string): string => path.join(work, name);
const canary = at('host-canary');
writeFileSync(canary, 'a file of the host the guest must never see\n'.repeat(1000));

/** The refusal of `image`: an 'input' BootCheckError on one line that names the file. */
async function refusal(image: string, format?: ImageFormat): Promise<string> {
  const e = await checkImage(image, format).then(() => undefined, (x: unknown) => x);
  expect(isBootCheckError(e, 'input'), `${image} was accepted`).toBe(true);
  const message = (e as Error).message;
  expect(message.startsWith(`${image} `) || message.includes(` ${image}`)).toBe(true);
  for (const c of ['\n', '\r', '\x1b']) expect(message).not.toContain(c);
  return message;
}

const copy = (from: string, name: string): string => {
  copyFileSync(from, at(name));
  return at(name);
};

/** 64 KiB of /dev/urandom (head), its bytes 510-511 zeroed so it never carries a boot signature by chance. */
function randomFile(name: string): string {
  execFileSync('sh', ['-c', 'head -c 65536 /dev/urandom > "$1"', 'sh', at(name)]);
  patch(at(name), 510, [0, 0]);
  return at(name);
}

const emptyFile = (name: string): string => {
  writeFileSync(at(name), '');
  return at(name);
};

describe('checkImage: the format is the extension (or the format given), checked against the magic', () => {
  it('takes self-contained images as qemu-img writes them', async () => {
    const cases: Array<[string, ImageFormat]> = [
      [qemuImg(work, 'v3.qcow2', 'qcow2'), 'qcow2'],
      [qemuImg(work, 'v2.qcow2', 'qcow2', '-o', 'compat=0.10'), 'qcow2'],
      [qemuImg(work, 'sparse.vmdk', 'vmdk'), 'vmdk'],
      [qemuImg(work, 'stream.vmdk', 'vmdk', '-o', 'subformat=streamOptimized'), 'vmdk'],
      [qemuImg(work, 'dynamic.vhd', 'vpc'), 'vhd'],
      [qemuImg(work, 'fixed.vhd', 'vpc', '-o', 'subformat=fixed'), 'vhd'],
      [qemuImg(work, 'dynamic.vdi', 'vdi'), 'vdi'],
      [qemuImg(work, 'static.vdi', 'vdi', '-o', 'static=on'), 'vdi'],
      [loopingDisk(work, 'boot.raw'), 'raw'],
      [loopingDisk(work, 'boot.IMG'), 'raw'],
    ];
    for (const [image, format] of cases) expect(await checkImage(image), image).toBe(format);
    // The embedded descriptor names the extent by the old name; QEMU reads it from this file anyway.
    expect(await checkImage(copy(at('sparse.vmdk'), 'renamed.vmdk'))).toBe('vmdk');
    // The format given stands in for the extension, and is checked all the same.
    expect(await checkImage(copy(at('v3.qcow2'), 'disk.bin'), 'qcow2')).toBe('qcow2');
    expect(await refusal(at('disk.bin'), 'vdi')).toBe(`${at('disk.bin')} is not a vdi image: found a qcow2 header (name it .qcow2)`);
  });

  it('refuses a name and a magic that disagree', async () => {
    expect(await refusal(copy(at('v3.qcow2'), 'q.vmdk'))).toContain('is not a vmdk image: found a qcow2 header (name it .qcow2)');
    expect(await refusal(copy(at('sparse.vmdk'), 'v.qcow2'))).toContain('is not a qcow2 image: found a VMDK sparse header');
    expect(await refusal(copy(at('dynamic.vdi'), 'd.vhd'))).toContain('is not a vhd image: found a VDI header');
    expect(await refusal(copy(at('fixed.vhd'), 'f.vdi'))).toContain('is not a vdi image: found a VHD footer');
    // A qcow2 named .img (as some cloud images are): raw has no magic, but no boot sector either.
    expect(await refusal(copy(at('v3.qcow2'), 'cloud.img'))).toContain('is no bootable raw disk: its first sector does not end in the boot signature 55 AA (found a qcow2 header); if it is a qcow2 image, name it .qcow2');
    expect(await refusal(copy(at('v3.qcow2'), 'disk'))).toContain('has no extension and holds a qcow2 header: name it .qcow2, .raw, .img, .vmdk, .vhd, .vdi');
  });

  it('refuses what is no disk image at once, before QEMU: random bytes, text, an empty file, gzip', async () => {
    const random = randomFile('random.bin');
    const readme = path.resolve(__dirname, '../../README.md');
    const started = Date.now();
    expect(await refusal(copy(random, 'random.raw'))).toContain('is no bootable raw disk: its first sector does not end in the boot signature 55 AA (found no known disk header)');
    expect(await refusal(copy(random, 'random.qcow2'))).toContain('is not a qcow2 image: found no known disk header');
    expect(await refusal(random)).toContain('has the unknown extension .bin and holds no known disk header');
    expect(await refusal(copy(readme, 'README.txt'))).toContain('has the unknown extension .txt and holds text');
    expect(await refusal(copy(readme, 'readme.raw'))).toContain('(found text)');
    expect(await refusal(copy(readme, 'readme.vmdk'))).toContain('is not a vmdk image: found text');
    for (const name of ['empty.raw', 'empty.qcow2', 'empty.vmdk']) expect(await refusal(emptyFile(name))).toBe(`${at(name)} is empty: it is no disk image`);
    // A VHD footer cut short (tail -c of a qemu-img image): too short to be the image it names.
    execFileSync('sh', ['-c', 'tail -c 512 "$1" | head -c 100 > "$2"', 'sh', at('fixed.vhd'), at('cut.vhd')]);
    expect(await refusal(at('cut.vhd'))).toContain('is a truncated VHD image');
    writeFileSync(at('v3.qcow2.gz'), gzipSync(readFileSync(at('v3.qcow2'))));
    expect(await refusal(at('v3.qcow2.gz'))).toContain(`is gzip-compressed data: decompress it first (gunzip -k ${at('v3.qcow2.gz')})`);
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});

describe('checkImage: what QEMU itself cannot open as the format named is refused with its words', () => {
  it('just a magic (head -c of a qemu-img image): QEMU\'s own message, on one line', async () => {
    for (const [from, name, said] of [['v3.qcow2', 'cut.qcow2', 'Unsupported cluster size'], ['sparse.vmdk', 'cut.vmdk', 'L1 entry size is invalid']] as const) {
      execFileSync('sh', ['-c', 'head -c 8 "$1" > "$2"', 'sh', at(from), at(name)]);
      const format = name.endsWith('.qcow2') ? 'qcow2' : 'vmdk';
      expect(await refusal(at(name))).toBe(`${at(name)} cannot be opened by QEMU as a ${format} image confined to this one file: Could not open '${at(name)}': ${said}${said === 'Unsupported cluster size' ? ': 2^0' : ''}`);
    }
  });
});

describe('checkImage: only self-contained images (one file, one layer)', () => {
  it('refuses a qcow2 with a backing file, an external data file or an internal snapshot', async () => {
    const backing = qemuImg(work, 'backing.qcow2', 'qcow2', '-b', canary, '-F', 'raw');
    expect(await refusal(backing)).toBe(`${backing} is a qcow2 image with a backing file "${canary}": boot takes only whole, self-contained images (one file, one layer)`);
    expect(await refusal(qemuImg(work, 'data-file.qcow2', 'qcow2', '-o', `data_file=${at('data-file.bin')}`))).toContain('is a qcow2 image with an external data file');
    const snap = qemuImg(work, 'snap.qcow2', 'qcow2');
    execFileSync('qemu-img', ['snapshot', '-c', 'before', snap]);
    expect(await refusal(snap)).toContain('is a qcow2 image with 1 internal snapshot (more than one layer)');
    // The data-file extension alone (its feature bit cleared by printf | dd) is refused too, by its name.
    const extOnly = qemuImg(work, 'data-ext.qcow2', 'qcow2', '-o', `data_file=${at('data-ext.bin')}`);
    patch(extOnly, 79, [0]);
    expect(await refusal(extOnly)).toContain(`is a qcow2 image with an external data file "${at('data-ext.bin')}"`);
  });

  it('a name found in the image is shown escaped on one line', async () => {
    const evil = qemuImg(work, 'evil.qcow2', 'qcow2', '-u', '-b', '/x\n\x1b[31mred', '-F', 'raw');
    expect(await refusal(evil)).toContain('with a backing file "/x\\x0a\\x1b[31mred"');
  });

  it('refuses a VMDK that names other files, a VHD differencing disk and a VDI differencing image', async () => {
    // A descriptor (text) whose extents are other files: QEMU, confined to this one file, finds none of them.
    const flat = qemuImg(work, 'flat.vmdk', 'vmdk', '-o', 'subformat=monolithicFlat');
    expect(await refusal(flat)).toBe(`${flat} cannot be opened by QEMU as a vmdk image confined to this one file: Could not open '${flat}': Could not open '${at('flat-flat.vmdk')}': No such file or directory`);
    expect(await refusal(qemuImg(work, 'split.vmdk', 'vmdk', '-o', 'subformat=twoGbMaxExtentSparse'))).toContain(`Could not open '${at('split-s001.vmdk')}': No such file or directory`);
    const delta = qemuImg(work, 'delta.vmdk', 'vmdk', '-b', at('sparse.vmdk'), '-F', 'vmdk');
    expect(await refusal(delta)).toContain(`is a VMDK delta disk with the parent "${at('sparse.vmdk')}"`);
    // Disk type 4 (differencing) in both footer copies, written by printf | dd.
    const diff = qemuImg(work, 'diff.vhd', 'vpc');
    for (const footer of [0, statSync(diff).size - 512]) patch(diff, footer + 60, [0, 0, 0, 4]);
    expect(await refusal(diff)).toContain('is a VHD differencing disk');
    const vdi = qemuImg(work, 'diff.vdi', 'vdi');
    patch(vdi, 0x4c, [4, 0, 0, 0]);
    expect(await refusal(vdi)).toContain('is a VDI differencing image');
  });
});

interface VmdkExtentInfo { readonly 'format-specific': { readonly data: { readonly extents: ReadonlyArray<{ readonly filename: string }> } } }

/** The extents of a VMDK as QEMU itself reads them: qemu-img info, run here without any confinement. */
const extentsSeenByQemu = (image: string): string[] =>
  (JSON.parse(execFileSync('qemu-img', ['info', '--output=json', '-f', 'vmdk', image], { encoding: 'utf8' })) as VmdkExtentInfo)['format-specific'].data.extents.map((e) => e.filename);

describe('a VMDK whose descriptor names a host file where a hand-written check did not look', () => {
  // The extent's 64 sectors are within the canary (44 000 bytes), so QEMU maps them all.
  const vectors = [
    ['signed.vmdk', `RW +64 FLAT "${canary}" 0`, 0],
    // The header's descriptor size is one sector; QEMU reads on, up to 1 MiB from the descriptor.
    ['padded.vmdk', `RW 64 FLAT "${canary}" 0`, 12 * 1024],
  ] as const;

  it('QEMU reads the canary as the disk\'s extent (qemu-img info itself); boot refuses the image, in QEMU\'s words', async () => {
    for (const [name, line, pad] of vectors) {
      const image = vmdkWithExtent(work, name, line, pad);
      expect(extentsSeenByQemu(image), name).toEqual([canary]);
      expect(await refusal(image)).toBe(`${image} cannot be opened by QEMU as a vmdk image confined to this one file: Could not open '${image}': Could not open '${canary}': No such file or directory`);
    }
    // An extent that is the image itself is the image: taken (QEMU confined sees it, at its own path).
    const self = vmdkWithExtent(work, 'self.vmdk', `RW 64 FLAT "${at('self.vmdk')}" 0`);
    expect(extentsSeenByQemu(self)).toEqual([self]);
    expect(await checkImage(self)).toBe('vmdk');
  });

  it('QEMU started on such an image anyway (past every check) cannot open the canary: it is confined to the image', async () => {
    for (const [name, line, pad] of vectors) {
      const image = vmdkWithExtent(work, `qemu-${name}`, line, pad);
      // Control: unconfined, QEMU holds the canary open as part of the guest's disk.
      expect((await openedByQemu(qemuArgs({ image, format: 'vmdk', memoryMiB: 128, network: 'none' }))).openFiles).toContain(canary);
      const dir = mkdtempSync(path.join(tmpdir(), 'af-confined-qemu-'));
      try {
        for (const sub of ['root', 'tmp']) mkdirSync(path.join(dir, sub));
        const qemu = startQemu({ image, format: 'vmdk', memoryMiB: 128, network: 'none' }, { root: path.join(dir, 'root'), paths: [{ path: image }, { path: path.join(dir, 'tmp'), writable: true }], tmp: path.join(dir, 'tmp') }, () => undefined);
        const timer = setTimeout(() => void qemu.kill(), 30_000);
        const exit = await qemu.exited;
        clearTimeout(timer);
        expect(exit.code, exit.stderr).toBe(1);
        expect(exit.stderr).toContain(`Could not open '${canary}': No such file or directory`);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  });
});

describe('QEMU opens the image and nothing else (asked of QEMU over QMP, machine stopped)', () => {
  it('a raw disk whose first sector is a qcow2 header with a backing file: .raw boots as raw and the canary is never opened; .qcow2 is refused', async () => {
    const image = rawWithQcow2Header(work, 'crafted.raw', canary);
    expect(await checkImage(image)).toBe('raw');
    const opened = await openedByQemu(qemuArgs({ image, format: 'raw', memoryMiB: 128, network: 'none' }));
    const files = opened.nodes.map((n) => n.file);
    expect(opened.nodes.filter((n) => n.file === image).map((n) => n.drv).sort()).toEqual(['file', 'raw']);
    expect(files.filter((f) => f.includes(canary))).toEqual([]);
    expect(opened.openFiles).toContain(image);
    expect(opened.openFiles).not.toContain(canary);
    // Control: had QEMU been told qcow2 (what probing the file says), it would have opened the canary.
    const probed = await openedByQemu(['-nodefaults', '-display', 'none', '-drive', `file=${image},format=qcow2,if=virtio,snapshot=on`]);
    expect(probed.openFiles).toContain(canary);

    expect(await refusal(copy(image, 'crafted.qcow2'))).toContain(`is a qcow2 image with a backing file "${canary}"`);
  });

  it('even a qcow2 with a backing file given straight to qemuArgs opens no backing file (backing: null)', async () => {
    const image = qemuImg(work, 'straight.qcow2', 'qcow2', '-b', canary, '-F', 'raw');
    const opened = await openedByQemu(qemuArgs({ image, format: 'qcow2', memoryMiB: 128, network: 'none' }));
    // The temporary overlay of snapshot=on and the image, each a format node on a file node; no third file.
    expect(opened.nodes.map((n) => n.drv).sort()).toEqual(['file', 'file', 'qcow2', 'qcow2']);
    expect(opened.nodes.filter((n) => n.drv === 'file').map((n) => n.file)).toContain(image);
    expect(opened.nodes.map((n) => n.file).filter((f) => f.includes(canary))).toEqual([]);
    expect(opened.openFiles).not.toContain(canary);
  });
});

describe('appliance-forge boot refuses a file that is no disk image at once (the real CLI)', () => {
  beforeAll(() => void cliBundle());

  it('exit 2 within seconds, one line naming the file and what it holds; no QEMU started', async () => {
    const txt = copy(path.resolve(__dirname, '../../README.md'), 'notadisk.txt');
    const crafted = at('crafted-cli.qcow2');
    copyFileSync(rawWithQcow2Header(work, 'crafted-cli.raw', canary), crafted);
    for (const [image, message] of [
      [txt, `${txt} has the unknown extension .txt and holds text`],
      [randomFile('random-cli.raw'), 'is no bootable raw disk'],
      [emptyFile('empty-cli.raw'), 'is empty: it is no disk image'],
      [crafted, `is a qcow2 image with a backing file "${canary}"`],
      [vmdkWithExtent(work, 'signed-cli.vmdk', `RW +64 FLAT "${canary}" 0`), `Could not open '${canary}': No such file or directory`],
      [vmdkWithExtent(work, 'padded-cli.vmdk', `RW 64 FLAT "${canary}" 0`, 12 * 1024), `Could not open '${canary}': No such file or directory`],
    ] as const) {
      const started = Date.now();
      const r = await runCli(['boot', image, '--timeout', '300']);
      expect(Date.now() - started, image).toBeLessThan(5_000);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain(message);
      expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(r.stderr).not.toContain('a file of the host');
    }
  });
});
