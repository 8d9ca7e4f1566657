// Real images, read back with qemu-img, sfdisk and e2fsprogs: container format and virtual size, the
// root partition, and the ext4 filesystem with the manifest and each file at its place with its mode.
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildImage, type BuildProgress, type DiskFormat } from '../../src/imaging';
import { GPT_TYPE, ROOT_OFFSET } from '../../src/imaging/disk/gpt';
import { MANIFEST_PATH } from '../../src/imaging/system/staging';
import { debugfsCat, debugfsStat, e2fsck, fakeOs, fakeTree, filesIn, fsType, partitionTable, qemuCheck, qemuInfo, tempDir, toRaw, type QemuInfo } from './tools';

const tmp = tempDir('build');
afterAll(() => tmp.cleanup());
// The formats and the filesystem are tested here on a tiny tree; booting a real one is system.test.ts.
const TREE = fakeTree(tmp.path);
const GiB = 1024;

const MiB = 1024 * 1024;
const manifest = JSON.stringify({ name: 'web', version: '1.0', packages: ['nginx'] });
const tool = randomBytes(3 * MiB + 17); // spans many blocks, odd length
const conf = Buffer.from('listen 8080;\n');
let files: { source: string; destination: string; rights?: string; ownerGroup?: string }[];

beforeAll(() => {
  writeFileSync(join(tmp.path, 'tool.bin'), tool);
  writeFileSync(join(tmp.path, 'app.conf'), conf);
  files = [
    { source: join(tmp.path, 'tool.bin'), destination: '/opt/web/bin/tool', rights: '0755', ownerGroup: 'root:web' },
    { source: join(tmp.path, 'app.conf'), destination: 'etc/web/app conf "main".conf', rights: '0640' },
    { source: join(tmp.path, 'app.conf'), destination: '/usr/local/bin/helper', rights: '4750' },
    { source: join(tmp.path, 'app.conf'), destination: '/srv/default-mode' },
  ];
});

/** Checks the filesystem inside a raw disk of `sizeMiB`. */
function expectAppliance(raw: string, sizeMiB: number): void {
  // The root partition from after the boot partitions to the last MiB (the backup GPT's).
  expect(partitionTable(raw).partitions.at(-1)).toMatchObject({ start: ROOT_OFFSET / 512, size: sizeMiB * 2048 - ROOT_OFFSET / 512 - 2048, type: GPT_TYPE.root });
  expect(fsType(raw)).toBe('ext4');
  const fsck = e2fsck(raw);
  expect(fsck.status, fsck.out).toBe(0);
  expect(debugfsCat(raw, MANIFEST_PATH).toString()).toBe(manifest);
  expect(debugfsCat(raw, '/opt/web/bin/tool').equals(tool)).toBe(true);
  expect(debugfsCat(raw, '/etc/web/app conf "main".conf').equals(conf)).toBe(true);
  expect(debugfsStat(raw, MANIFEST_PATH)).toMatchObject({ type: 'regular', mode: 0o644, uid: 0, gid: 0, size: manifest.length });
  expect(debugfsStat(raw, '/opt/web/bin/tool')).toMatchObject({ type: 'regular', mode: 0o755, uid: 0, gid: 1500, size: tool.length }); // web in the tree's /etc/group
  expect(debugfsStat(raw, '/etc/web/app conf "main".conf')).toMatchObject({ type: 'regular', mode: 0o640, uid: 0, gid: 0 });
  expect(debugfsStat(raw, '/usr/local/bin/helper')).toMatchObject({ type: 'regular', mode: 0o4750, uid: 0, gid: 0 });
  expect(debugfsStat(raw, '/srv/default-mode')).toMatchObject({ type: 'regular', mode: 0o644 });
  expect(debugfsStat(raw, '/opt/web/bin')).toMatchObject({ type: 'directory', mode: 0o755, uid: 0, gid: 0 });
}

const QEMU_NAME: Record<DiskFormat, string> = { raw: 'raw', qcow2: 'qcow2', vmdk: 'vmdk', vhd: 'vpc', vdi: 'vdi' };

/** What each platform asks of its format: a VMDK for upload, a fixed VHD (Azure), qcow2's version. */
async function expectSubformat(disk: DiskFormat, file: string, info: QemuInfo): Promise<void> {
  const size = statSync(file).size;
  switch (disk) {
    case 'vmdk':
      expect(info['format-specific']?.data['create-type']).toBe('streamOptimized');
      return;
    case 'vhd': {
      // Fixed: the disk's bytes then a 512-byte footer of disk type 2, the size a whole number of MiB.
      expect(size).toBe(GiB * MiB + 512);
      const footer = Buffer.alloc(512);
      const fh = await open(file, 'r');
      await fh.read(footer, 0, 512, size - 512).finally(() => fh.close());
      expect(footer.subarray(0, 8).toString('latin1')).toBe('conectix');
      expect(footer.readUInt32BE(60)).toBe(2);
      expect(Number(footer.readBigUInt64BE(48)) % MiB).toBe(0);
      return;
    }
    case 'qcow2':
      expect(info['format-specific']?.data['compat']).toBe('1.1');
      return;
    case 'vdi':
    case 'raw':
      expect(info['format-specific']).toBeUndefined();
  }
}

describe.each(['raw', 'qcow2', 'vmdk', 'vhd', 'vdi'] as const)('buildImage %s', (disk) => {
  it('writes a disk of the format and size that holds the appliance', async () => {
    const dir = tempDir(`out-${disk}`);
    try {
      const outFile = join(dir.path, `web.${disk}`);
      const work = join(dir.path, 'work');
      const reports: BuildProgress[] = [];
      const result = await buildImage({ ...fakeOs(TREE, GiB), disk, compress: false, files, manifest, outFile, workDir: work, onProgress: (p) => reports.push(p) });

      expect(result.virtualSizeBytes).toBe(GiB * MiB);
      expect(result.fileSize).toBe(statSync(outFile).size);
      expect(result.sha256).toBe(execFileSync('sha256sum', [outFile], { encoding: 'utf8' }).split(' ')[0]);
      expect(result.md5).toBe(execFileSync('md5sum', [outFile], { encoding: 'utf8' }).split(' ')[0]);
      const info = qemuInfo(outFile, QEMU_NAME[disk]);
      expect(info.format).toBe(QEMU_NAME[disk]);
      expect(info['virtual-size']).toBe(GiB * MiB);
      await expectSubformat(disk, outFile, info);
      if (disk !== 'raw' && disk !== 'vhd') {
        // qemu-img check has no consistency check for raw or vpc
        const check = qemuCheck(outFile, QEMU_NAME[disk]);
        expect(check.status, check.out).toBe(0);
      }
      const raw = disk === 'raw' ? outFile : toRaw(outFile, QEMU_NAME[disk], join(dir.path, 'back.raw'));
      expectAppliance(raw, GiB);

      // Progress: starts at 0, only grows, ends at 100; the work dir is left empty.
      expect(reports[0]!.percentage).toBe(0);
      expect(reports.at(-1)).toMatchObject({ percentage: 100, message: 'image ready' });
      for (let i = 1; i < reports.length; i++) expect(reports[i]!.percentage).toBeGreaterThanOrEqual(reports[i - 1]!.percentage);
      expect(filesIn(work)).toEqual([]);
    } finally {
      dir.cleanup();
    }
  });
});

describe('qcow2 allocation', () => {
  it('allocates only the clusters that hold data (a 1 GiB disk stays small)', async () => {
    const dir = tempDir('sparse');
    try {
      const outFile = join(dir.path, 'web.qcow2');
      const reproducible = { seed: 'ab'.repeat(32), sourceDateEpoch: 1_700_000_000 };
      const r = await buildImage({ ...fakeOs(TREE, GiB), disk: 'qcow2', compress: false, files, manifest, outFile, workDir: dir.path, imageName: 'web-1.0.qcow2', reproducible });
      // Its SBOMs: named as asked, bound to its digest, dated SOURCE_DATE_EPOCH; this tree has no dpkg, only software files.
      const spdx = JSON.parse(r.sbom.spdx) as { name: string; creationInfo: { created: string }; packages: Array<{ checksums?: unknown }>; files: unknown[] };
      expect(spdx).toMatchObject({ name: 'web-1.0.qcow2', creationInfo: { created: '2023-11-14T22:13:20Z' } });
      expect(spdx.packages).toEqual([expect.objectContaining({ checksums: [{ algorithm: 'SHA256', checksumValue: r.sha256 }] })]);
      expect([r.sbom.packages, spdx.files.length]).toEqual([0, files.length]);
      // The 3 MiB file, the boot loaders (core.img, the ESP's signed shim and GRUB: ~6 MiB) and ext4 metadata and journal (about 16 MiB for this size, mostly zeros).
      expect(r.fileSize).toBeLessThan(28 * MiB);
      expect(r.fileSize % 65536).toBe(0);
      const check = qemuCheck(outFile, 'qcow2');
      expect(check.status, check.out).toBe(0);
      // qemu-img writes the same guest content: the two must compare equal.
      const raw = toRaw(outFile, 'qcow2', join(dir.path, 'back.raw'));
      execFileSync('qemu-img', ['compare', '-f', 'raw', '-F', 'qcow2', raw, outFile]);
      expectAppliance(raw, 1024);
    } finally {
      dir.cleanup();
    }
  });
});

describe('compress', () => {
  it.each(['qcow2', 'raw', 'vdi'] as const)('gzips the %s disk; digests are those of the .gz file', async (disk) => {
    const dir = tempDir(`gz-${disk}`);
    try {
      const outFile = join(dir.path, `web.${disk}.gz`);
      const r = await buildImage({ ...fakeOs(TREE, GiB), disk, compress: true, files, manifest, outFile, workDir: dir.path });
      const gz = readFileSync(outFile);
      expect(gz.subarray(0, 2).equals(Buffer.from([0x1f, 0x8b]))).toBe(true);
      expect(r.fileSize).toBe(gz.length);
      expect(r.sha256).toBe(createHash('sha256').update(gz).digest('hex'));
      expect(r.md5).toBe(createHash('md5').update(gz).digest('hex'));
      const unpacked = join(dir.path, `web.${disk}`);
      execFileSync('sh', ['-c', 'gzip -dc "$1" > "$2"', 'sh', outFile, unpacked]);
      const info = qemuInfo(unpacked);
      expect(info.format).toBe(QEMU_NAME[disk]);
      expect(info['virtual-size']).toBe(GiB * MiB);
      const raw = disk === 'raw' ? unpacked : toRaw(unpacked, QEMU_NAME[disk], join(dir.path, 'back.raw'));
      expectAppliance(raw, GiB);
    } finally {
      dir.cleanup();
    }
  });
});
