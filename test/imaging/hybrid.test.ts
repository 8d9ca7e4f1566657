// The hybrid disk read back by independent tools: sfdisk (GPT), mtools (the EFI system partition),
// e2fsprogs (the root filesystem) and the BIOS boot code's fields at their documented offsets. A tiny
// tree, not a Debian: whether it boots is the e2e test's (real-image.test.ts).
import { execFileSync, spawnSync } from 'node:child_process';
import { closeSync, openSync, readFileSync, readSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildImage } from '../../src/imaging';
import { EFI_BOOT_PATH, EFI_CONFIG_PATH, EFI_GRUB_PATH, SIGNED_GRUB, SIGNED_SHIM } from '../../src/imaging/disk/esp';
import { BIOS_BOOT_OFFSET, ESP_MIB, ESP_OFFSET, GPT_TYPE, ROOT_OFFSET } from '../../src/imaging/disk/gpt';
import { EMBEDDED_CONFIG } from '../../src/imaging/disk/grub';
import { diskIdsFrom } from '../../src/imaging/disk/disk-ids';
import { debugfsCat, e2fsck, fakeOs, fakeTree, partitionTable, superblock, tempDir } from './tools';

const tmp = tempDir('hybrid');
afterAll(() => tmp.cleanup());
const MiB = 1024 * 1024;
const SEED = 'hybrid-test-seed';
const EPOCH = 1_700_000_000;
const ids = diskIdsFrom(SEED);
let raw: string;

function bytesAt(file: string, offset: number, length: number): Buffer {
  const fd = openSync(file, 'r');
  try {
    const b = Buffer.alloc(length);
    readSync(fd, b, 0, length, offset);
    return b;
  } finally {
    closeSync(fd);
  }
}

async function build(name: string): Promise<string> {
  const outFile = join(tmp.path, name);
  await buildImage({
    ...fakeOs(fakeTree(join(tmp.path, name.replace('.', '-'))), 1024), disk: 'raw', compress: false, files: [], manifest: '{}',
    outFile, workDir: join(tmp.path, 'work'), reproducible: { seed: SEED, sourceDateEpoch: EPOCH },
  });
  return outFile;
}

const esp = (file: string): string => `${file}@@${ESP_OFFSET}`;

beforeAll(async () => {
  raw = await build('a.raw');
}, 120_000);

describe('the hybrid disk', () => {
  it('GPT: BIOS boot 1 MiB at sector 2048, the ESP after it, root to the last MiB, every GUID from the seed', () => {
    const t = partitionTable(raw);
    expect(t.label).toBe('gpt');
    expect(t.id).toBe(ids.diskGuid.toUpperCase());
    expect(t.partitions.map(({ start, size, type, uuid, name }) => ({ start, size, type, uuid, name }))).toEqual([
      { start: 2048, size: 2048, type: GPT_TYPE.biosBoot, uuid: ids.biosPartGuid.toUpperCase(), name: 'BIOS boot' },
      { start: 4096, size: ESP_MIB * 2048, type: GPT_TYPE.esp, uuid: ids.espPartGuid.toUpperCase(), name: 'EFI system' },
      { start: ROOT_OFFSET / 512, size: 1024 * 2048 - ROOT_OFFSET / 512 - 2048, type: GPT_TYPE.root, uuid: ids.rootPartGuid.toUpperCase(), name: 'root' },
    ]);
    expect(execFileSync('sfdisk', ['--verify', raw], { encoding: 'utf8' })).toMatch(/No errors detected/);
  });

  it("ESP: FAT32 with the volume id of the seed, Debian's signed shim at the removable-media path, the signed GRUB beside it, its config in EFI/debian", () => {
    const dir = execFileSync('mdir', ['-i', esp(raw), '::/EFI/BOOT'], { encoding: 'utf8' });
    expect(dir).toMatch(/BOOTX64\s+EFI/);
    expect(dir).toMatch(new RegExp(`Volume Serial Number is ${ids.espVolumeId.slice(0, 4)}-${ids.espVolumeId.slice(4)}`, 'i'));
    const file = (p: string): Buffer => execFileSync('mtype', ['-i', esp(raw), `::/${p}`], { maxBuffer: 64 * MiB });
    expect(file(EFI_BOOT_PATH).equals(readFileSync(SIGNED_SHIM))).toBe(true);
    expect(file(EFI_GRUB_PATH).equals(readFileSync(SIGNED_GRUB))).toBe(true);
    expect(file(EFI_CONFIG_PATH).toString()).toBe(EMBEDDED_CONFIG);
    const fat = join(tmp.path, 'esp.fat');
    writeFileSync(fat, bytesAt(raw, ESP_OFFSET, ESP_MIB * MiB));
    const fsck = spawnSync('fsck.fat', ['-n', fat], { encoding: 'utf8' });
    expect(fsck.status, `${fsck.stdout}${fsck.stderr}`).toBe(0);
  });

  it('BIOS: boot.img in the protective MBR points at the BIOS boot partition; core.img there lists the rest of itself', () => {
    const mbr = bytesAt(raw, 0, 512);
    expect(mbr.readUInt16LE(510)).toBe(0xaa55);
    expect(mbr[446 + 4]).toBe(0xee); // the protective partition, kept under boot.img's code
    expect(mbr.subarray(0, 440).equals(readFileSync('/usr/lib/grub/i386-pc/boot.img').subarray(0, 440))).toBe(false);
    expect(mbr.readBigUInt64LE(0x5c)).toBe(BigInt(BIOS_BOOT_OFFSET / 512));
    expect(mbr.readUInt16LE(0x66)).toBe(0x9090);
    const first = bytesAt(raw, BIOS_BOOT_OFFSET, 512);
    expect(first.readBigUInt64LE(0x1f4)).toBe(BigInt(BIOS_BOOT_OFFSET / 512 + 1));
    const rest = first.readUInt16LE(0x1fc);
    expect(rest).toBeGreaterThan(50);
    // The blocklist covers all of core.img: its last sector holds data, everything after it up to the ESP is zero.
    const partition = bytesAt(raw, BIOS_BOOT_OFFSET, ESP_OFFSET - BIOS_BOOT_OFFSET);
    expect(partition.subarray(rest * 512, (rest + 1) * 512).some((b) => b !== 0)).toBe(true);
    expect(partition.subarray((rest + 1) * 512).every((b) => b === 0)).toBe(true);
  });

  it('root: ext4 labelled root with the UUID and hash seed of the seed; grub.cfg boots at once with the menu hidden', () => {
    const sb = superblock(raw);
    expect(sb['Filesystem volume name']).toBe('root');
    expect(sb['Filesystem UUID']).toBe(ids.rootFsUuid);
    expect(sb['Directory Hash Seed']).toBe(ids.hashSeed);
    expect(e2fsck(raw).status).toBe(0);
    const cfg = debugfsCat(raw, '/boot/grub/grub.cfg').toString();
    expect(cfg).toMatch(/^set timeout_style=hidden$/m);
    expect(cfg).toMatch(/^set timeout=0$/m);
  });

  it('the same seed and time give the same boot partitions and tables, byte for byte', async () => {
    const again = await build('b.raw');
    expect(statSync(again).size).toBe(statSync(raw).size);
    expect(bytesAt(again, 0, ROOT_OFFSET).equals(bytesAt(raw, 0, ROOT_OFFSET))).toBe(true);
    expect(bytesAt(again, 1024 * MiB - MiB, MiB).equals(bytesAt(raw, 1024 * MiB - MiB, MiB))).toBe(true);
  }, 120_000);
});
