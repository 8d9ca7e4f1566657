// Test images made by independent tools (qemu-img, qemu-io, sfdisk, dd, printf, head, gzip; Buffer writes
// of a format's documented layout, confirmed by qemu-img), never by the code under test: the boot
// check's format and self-containment checks are judged against what those tools write.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';

/** `qemu-img create` of an 8 MiB image (`-q`; options such as `-b`, `-o` before the file). */
export function qemuImg(dir: string, name: string, format: string, ...options: string[]): string {
  const file = path.join(dir, name);
  execFileSync('qemu-img', ['create', '-q', '-f', format, ...options, file, '8M']);
  return file;
}

/** Writes `bytes` at `offset` of `file` in place (printf into dd). */
export function patch(file: string, offset: number, bytes: readonly number[]): void {
  const octal = bytes.map((b) => `\\${b.toString(8).padStart(3, '0')}`).join('');
  execFileSync('sh', ['-c', 'printf "$1" | dd of="$2" bs=1 seek="$3" conv=notrunc status=none', 'sh', octal, file, String(offset)]);
}

/** Copies the first `bytes` bytes of `from` over the start of `to` (dd). */
export function overlayHead(from: string, to: string, bytes: number): void {
  execFileSync('dd', [`if=${from}`, `of=${to}`, `bs=${bytes}`, 'count=1', 'conv=notrunc', 'status=none']);
}

/** A raw disk whose boot sector loops forever (`jmp $`, EB FE) and ends in the 55 AA signature: it boots, never to a login. */
export function loopingDisk(dir: string, name: string): string {
  const file = qemuImg(dir, name, 'raw');
  patch(file, 0, [0xeb, 0xfe]);
  patch(file, 510, [0x55, 0xaa]);
  return file;
}

/**
 * The case a crafted disk poses: a bootable raw disk whose first sector is a qcow2 header naming
 * `canary` as its backing file (qemu-img's own v2 header, dd'd over the first 510 bytes, 55 AA kept).
 */
export function rawWithQcow2Header(dir: string, name: string, canary: string): string {
  const header = qemuImg(dir, `${name}.header.qcow2`, 'qcow2', '-o', 'compat=0.10', '-u', '-b', canary, '-F', 'raw');
  const file = loopingDisk(dir, name);
  overlayHead(header, file, 510);
  return file;
}

/**
 * A 64 KiB VMDK sparse header (`KDMV`, version 1, capacity 0) whose descriptor, at sector 1, is
 * `createType="monolithicFlat"` with one extent line, after `pad` newlines: an extent the descriptor check of old never read.
 * QEMU reads a descriptor there when the capacity is 0, up to 1 MiB of it (not the `descSize` sectors
 * the header gives, 1 here), and reads an extent's sector count with sscanf's %lld (a sign allowed).
 * Written with Buffer from the VMDK 1.1 layout; tests confirm with `qemu-img info` what QEMU sees in it.
 */
export function vmdkWithExtent(dir: string, name: string, extentLine: string, pad = 0): string {
  const file = path.join(dir, name);
  const image = Buffer.alloc(65536);
  image.write('KDMV', 0, 'latin1');
  image.writeUInt32LE(1, 4); // version
  image.writeUInt32LE(3, 8); // flags: valid newline test, redundant grain table
  image.writeBigUInt64LE(0n, 12); // capacity 0: the data is the descriptor's extents
  image.writeBigUInt64LE(128n, 20); // grain size
  image.writeBigUInt64LE(1n, 28); // descriptor offset (sectors)
  image.writeBigUInt64LE(1n, 36); // descriptor size (sectors)
  image.writeUInt32LE(512, 44); // grain table entries
  image.write('\n \r\n', 73, 'latin1'); // the newline check bytes
  const descriptor = `# Disk DescriptorFile\nversion=1\nCID=fffffffe\nparentCID=ffffffff\ncreateType="monolithicFlat"\n${'\n'.repeat(pad)}# Extent description\n${extentLine}\n`;
  image.write(descriptor, 512, 'latin1');
  writeFileSync(file, image);
  return file;
}

/**
 * A qcow2 bomb: a 100 GiB virtual disk whose GPT (sfdisk, on a sparse raw file) has one
 * Linux partition from 1 MiB to the end, and whose `mib` MiB from 2 MiB on are 64 KiB
 * clusters of the byte 0x55, each written compressed with zstd by qemu-io: a file of a few hundred
 * KiB whose virtual disk holds `mib` MiB of data that is not zeros.
 */
export function qcow2Bomb(dir: string, name: string, mib = 256): string {
  const raw = path.join(dir, `${name}.table.raw`);
  const file = path.join(dir, name);
  execFileSync('qemu-img', ['create', '-q', '-f', 'raw', raw, '100G']);
  execFileSync('sfdisk', ['-q', raw], { input: 'label: gpt\nstart=2048, type=0FC63DAF-8483-4772-8E79-3D69D8477DE4\n' });
  execFileSync('qemu-img', ['convert', '-O', 'qcow2', '-o', 'compression_type=zstd', raw, file]);
  execFileSync('rm', ['-f', raw]);
  const writes: string[] = [];
  for (let i = 0; i < mib * 16; i++) writes.push('-c', `write -c -P 0x55 ${2 * 1024 * 1024 + i * 65536} 64k`);
  execFileSync('qemu-io', ['-f', 'qcow2', ...writes, file], { stdio: 'ignore' });
  return file;
}
