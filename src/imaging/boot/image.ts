// Which disk format an image is in, and whether it is safe to hand to QEMU. The format is what the
// caller names (the file's extension, or an explicit format) and must agree with the file's magic,
// read here by Node: QEMU is then told the format and never probes. An image whose header sends QEMU
// to other files (a backing file, a data file, extents, a parent) is refused, because QEMU would open
// those files of this machine as part of the guest's disk. A compressed file is refused with what to
// run instead: decompressing behind the user's back could fill a disk with a multi-GiB raw image.
import { open } from 'node:fs/promises';
import path from 'node:path';
import { messageOf } from '../../errors';
import { diskBytesOf, type DiskBytes } from './disk-bytes';
import { hasBootSignature, sniffDisk, type DiskKind, type Found } from './disk-magic';
import { BootCheckError } from './errors';
import { qcow2Refusal } from './qcow2-header';
import { vdiRefusal } from './vdi-header';
import { vhdRefusal } from './vhd-footer';
import { vmdkRefusal } from './vmdk-header';

export const IMAGE_FORMATS = ['qcow2', 'raw', 'vmdk', 'vhd', 'vdi'] as const;
export type ImageFormat = (typeof IMAGE_FORMATS)[number];

/** QEMU's name of each format (VHD is qemu's `vpc`). */
export const QEMU_FORMAT: Readonly<Record<ImageFormat, string>> = { qcow2: 'qcow2', raw: 'raw', vmdk: 'vmdk', vhd: 'vpc', vdi: 'vdi' };

export function isImageFormat(s: string): s is ImageFormat {
  return (IMAGE_FORMATS as readonly string[]).includes(s);
}

/** File name extensions and the format each means (`.img`: raw). */
const EXTENSIONS: Readonly<Record<string, ImageFormat>> = { '.qcow2': 'qcow2', '.raw': 'raw', '.img': 'raw', '.vmdk': 'vmdk', '.vhd': 'vhd', '.vdi': 'vdi' };

/** The magics that may begin each format; raw has none (any bytes are a raw disk). */
const KINDS: Readonly<Record<Exclude<ImageFormat, 'raw'>, readonly DiskKind[]>> = { qcow2: ['qcow2'], vmdk: ['vmdk', 'vmdk-descriptor'], vhd: ['vhd'], vdi: ['vdi'] };

function selfContainedRefusal(format: ImageFormat, d: DiskBytes, found: Found): Promise<string | undefined> {
  switch (format) {
    case 'qcow2': return qcow2Refusal(d);
    case 'vmdk': return vmdkRefusal(d, found.kind === 'vmdk-descriptor');
    case 'vhd': return vhdRefusal(d);
    case 'vdi': return vdiRefusal(d);
    case 'raw': return Promise.resolve(undefined);
  }
}

/** The extension a found magic would want, for a hint. */
const extensionFor = (kind: DiskKind): string => `.${kind === 'vmdk-descriptor' ? 'vmdk' : kind}`;

/**
 * Checks the image and returns its format; every refusal is a one-line 'input' BootCheckError naming
 * the file and what was found in it. `claimed` (an explicit format) stands in for the extension.
 */
export async function checkImage(image: string, claimed?: ImageFormat): Promise<ImageFormat> {
  const refused = (why: string): BootCheckError => new BootCheckError('input', `${image} ${why}`);
  let f;
  try {
    f = await open(image, 'r');
  } catch (e) {
    throw new BootCheckError('input', `cannot read the image ${image}: ${messageOf(e)}`);
  }
  try {
    const stat = await f.stat();
    if (!stat.isFile()) throw refused('is not a regular file');
    const d = diskBytesOf(f, stat.size);
    const found = await sniffDisk(d);
    if (found.undo) throw refused(`is ${found.what}: decompress it first (${found.undo} ${image}) and boot the result`);
    if (d.size === 0) throw refused('is empty: it is no disk image');
    const ext = path.extname(image).toLowerCase();
    const format = claimed ?? EXTENSIONS[ext];
    if (format === undefined) {
      throw refused(`has ${ext ? `the unknown extension ${ext}` : 'no extension'} and holds ${found.what}: name it ${Object.keys(EXTENSIONS).join(', ')} (or give the format)`);
    } else if (format === 'raw') {
      // Raw has no magic to check, so the one thing every disk SeaBIOS boots has is asked for.
      if (!hasBootSignature(await d.read(0, 512))) {
        const hint = found.kind ? `; if it is a ${found.kind} image, name it ${extensionFor(found.kind)}` : '';
        throw refused(`is no bootable raw disk: its first sector does not end in the boot signature 55 AA (found ${found.what})${hint}`);
      }
    } else if (!found.kind || !KINDS[format].includes(found.kind)) {
      throw refused(`is not a ${format} image: found ${found.what}${found.kind ? ` (name it ${extensionFor(found.kind)})` : ''}`);
    }
    const why = await selfContainedRefusal(format, d, found);
    if (why) throw refused(`${why}: boot takes only whole, self-contained images (one file, one layer)`);
    return format;
  } catch (e) {
    if (e instanceof BootCheckError) throw e;
    throw new BootCheckError('input', `cannot read the image ${image}: ${messageOf(e)}`);
  } finally {
    await f.close();
  }
}
