// Test images made by independent tools (qemu-img, dd, printf, head, gzip), never by the code under
// test: the boot check's format and self-containment checks are judged against what those tools write.
import { execFileSync } from 'node:child_process';
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
