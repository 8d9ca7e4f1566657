// Which disk format an image is in: the caller's word, or `qemu-img info` (Debian qemu-utils). A
// compressed file is refused with what to run instead: QEMU would boot its bytes as a blank raw disk,
// and decompressing behind the user's back could fill a disk with a multi-GiB raw image.
import { execFile } from 'node:child_process';
import { open } from 'node:fs/promises';
import { AbortedError, messageOf } from '../errors';
import { BootCheckError } from './errors';
import { requireBootTools } from './host-tools';

export const IMAGE_FORMATS = ['qcow2', 'raw', 'vmdk', 'vhd', 'vdi'] as const;
export type ImageFormat = (typeof IMAGE_FORMATS)[number];

/** QEMU's name of each format (VHD is qemu's `vpc`). */
export const QEMU_FORMAT: Readonly<Record<ImageFormat, string>> = { qcow2: 'qcow2', raw: 'raw', vmdk: 'vmdk', vhd: 'vpc', vdi: 'vdi' };

export function isImageFormat(s: string): s is ImageFormat {
  return (IMAGE_FORMATS as readonly string[]).includes(s);
}

const COMPRESSED: ReadonlyArray<{ magic: readonly number[]; name: string; undo: string }> = [
  { magic: [0x1f, 0x8b], name: 'gzip', undo: 'gunzip -k' },
  { magic: [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00], name: 'xz', undo: 'unxz -k' },
  { magic: [0x28, 0xb5, 0x2f, 0xfd], name: 'zstd', undo: 'unzstd' },
  { magic: [0x42, 0x5a, 0x68], name: 'bzip2', undo: 'bunzip2 -k' },
];

/** Refuses what is not a readable regular file, or is a compressed file. */
export async function checkImageFile(image: string): Promise<void> {
  let head: Buffer;
  try {
    const f = await open(image, 'r');
    try {
      if (!(await f.stat()).isFile()) throw new BootCheckError('input', `${image} is not a regular file`);
      head = Buffer.alloc(8);
      await f.read(head, 0, 8, 0);
    } finally {
      await f.close();
    }
  } catch (e) {
    if (e instanceof BootCheckError) throw e;
    throw new BootCheckError('input', `cannot read the image ${image}: ${messageOf(e)}`);
  }
  for (const c of COMPRESSED) {
    if (c.magic.every((b, i) => head[i] === b)) {
      throw new BootCheckError('input', `${image} is ${c.name}-compressed: decompress it first (${c.undo} ${image}) and boot the result`);
    }
  }
}

/** The format `qemu-img info` reads in the file (`-U`: works while another process has it open). */
export async function detectImageFormat(image: string, signal?: AbortSignal): Promise<ImageFormat> {
  requireBootTools(['qemu-img']);
  const out = await new Promise<string>((resolve, reject) => {
    execFile('qemu-img', ['info', '-U', '--output=json', '--', image], { signal, maxBuffer: 1 << 20, env: { ...process.env, LC_ALL: 'C' } }, (err, stdout, stderr) => {
      if (signal?.aborted) return reject(new AbortedError('boot check aborted'));
      if (err) return reject(new BootCheckError('input', `qemu-img cannot read ${image}: ${String(stderr).trim() || err.message}`));
      resolve(stdout);
    });
  });
  const name = (JSON.parse(out) as { format?: string }).format ?? '';
  const format = (Object.keys(QEMU_FORMAT) as ImageFormat[]).find((f) => QEMU_FORMAT[f] === name);
  if (!format) throw new BootCheckError('input', `${image} is a ${name || 'unknown'} image; the boot check takes ${IMAGE_FORMATS.join(', ')}`);
  return format;
}
