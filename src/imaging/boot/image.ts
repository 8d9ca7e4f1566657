// Which disk format an image is in, and whether it is safe to hand to QEMU. The format is what the
// caller names (the file's extension, or an explicit format) and must agree with the file's magic,
// read here by Node: QEMU is then told the format and never probes. A compressed file is refused with
// what to run instead: decompressing behind the user's back could fill a disk with a multi-GiB raw image.
//
// Which other files the image names is QEMU's own reading, never a second parser's: `qemu-img info`,
// run confined to the image (host/confine.ts), so that what a header names cannot be a host file even
// while it is read. An image is refused when QEMU cannot open it with no file but itself (a VMDK
// descriptor's extent in another file: the file is not there to open), and when QEMU's answer names
// another file all the same (a backing file or parent, an external data file, an extent other than the
// image) or more than one layer (an internal snapshot). VHD and VDI differencing images, which QEMU
// reads as whole disks without their parent, are refused by their type field: incomplete, not unsafe.
import { mkdtemp, open, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { confinementProblem } from '../../host/confine';
import { messageOf } from '../../errors';
import { diskBytesOf, shown, type DiskBytes } from './disk-bytes';
import { hasBootSignature, sniffDisk, type DiskKind } from './disk-magic';
import { BootCheckError } from './errors';
import { QEMU_FORMAT, type ImageFormat } from './image-format';
import { qemuImgInfo, type QemuImageInfo } from './qemu-img';
import { vdiRefusal } from './vdi-header';
import { vhdRefusal } from './vhd-footer';

export { IMAGE_FORMATS, isImageFormat, QEMU_FORMAT, type ImageFormat } from './image-format';

/** File name extensions and the format each means (`.img`: raw). */
const EXTENSIONS: Readonly<Record<string, ImageFormat>> = { '.qcow2': 'qcow2', '.raw': 'raw', '.img': 'raw', '.vmdk': 'vmdk', '.vhd': 'vhd', '.vdi': 'vdi' };

/** The magics that may begin each format; raw has none (any bytes are a raw disk). */
const KINDS: Readonly<Record<Exclude<ImageFormat, 'raw'>, readonly DiskKind[]>> = { qcow2: ['qcow2'], vmdk: ['vmdk', 'vmdk-descriptor'], vhd: ['vhd'], vdi: ['vdi'] };

/** A VMDK's parent CID when it has no parent (QEMU prints it as a number). */
const NO_PARENT_CID = 0xffffffff;

/** The extension a found magic would want, for a hint. */
const extensionFor = (kind: DiskKind): string => `.${kind === 'vmdk-descriptor' ? 'vmdk' : kind}`;

/** An image that passed the check. */
export interface CheckedImage {
  /** The image as the caller named it (for messages). */
  readonly name: string;
  /** The absolute path, links resolved: the one QEMU's programs are given (and see, confined). */
  readonly path: string;
  readonly format: ImageFormat;
  /** Bytes of the virtual disk, as QEMU reads it. */
  readonly virtualSize: number;
  /** Bytes of the file. */
  readonly fileSize: number;
}

/** Throws a 'confinement' BootCheckError when QEMU's programs cannot be confined on this host. */
export function requireConfinement(): void {
  const why = confinementProblem();
  if (why !== undefined) throw new BootCheckError('confinement', why);
}

/** Why QEMU's reading of the image says it is not one self-contained layer; undefined when it is. */
export function infoRefusal(info: QemuImageInfo, image: string, format: ImageFormat): string | undefined {
  const backing = info['backing-filename'] ?? info['full-backing-filename'];
  const data = info['format-specific']?.data;
  if (backing !== undefined) return format === 'vmdk' ? `is a VMDK delta disk with the parent ${shown(backing)}` : `is a ${format} image with a backing file ${shown(backing)}`;
  if (data?.['data-file'] !== undefined) return `is a ${format} image with an external data file ${shown(data['data-file'])}`;
  const snapshots = info.snapshots?.length ?? 0;
  if (snapshots > 0) return `is a ${format} image with ${snapshots} internal snapshot${snapshots > 1 ? 's' : ''} (more than one layer)`;
  if (format === 'vmdk') {
    const parent = data?.['parent-cid'];
    if (parent !== undefined && parent !== NO_PARENT_CID) return `is a VMDK delta disk (parentCID ${parent.toString(16)})`;
    const others = (data?.extents ?? []).filter((e) => e.filename === undefined || path.resolve(path.dirname(image), e.filename) !== image);
    if (others.length > 0) return `is a VMDK image whose descriptor names other extents (${others.map((e) => `${e.format || 'SPARSE'} ${shown(e.filename ?? '')}`).join(', ')})`;
  }
  return undefined;
}

/** The header checks of formats QEMU reads without their parent (completeness, not confinement). */
function typeRefusal(format: ImageFormat, d: DiskBytes): Promise<string | undefined> {
  if (format === 'vhd') return vhdRefusal(d);
  if (format === 'vdi') return vdiRefusal(d);
  return Promise.resolve(undefined);
}

/**
 * Checks the image and returns what QEMU reads in it; every refusal is a one-line 'input'
 * BootCheckError naming the file and what was found in it. `claimed` (an explicit format) stands in
 * for the extension.
 */
export async function inspectImage(image: string, claimed?: ImageFormat, signal?: AbortSignal): Promise<CheckedImage> {
  const refused = (why: string): BootCheckError => new BootCheckError('input', `${image} ${why}`);
  let f;
  let resolved: string;
  try {
    resolved = await realpath(image);
    f = await open(resolved, 'r');
  } catch (e) {
    throw new BootCheckError('input', `cannot read the image ${image}: ${messageOf(e)}`);
  }
  let format: ImageFormat;
  let fileSize: number;
  try {
    const stat = await f.stat();
    if (!stat.isFile()) throw refused('is not a regular file');
    fileSize = stat.size;
    const d = diskBytesOf(f, stat.size);
    const found = await sniffDisk(d);
    if (found.undo) throw refused(`is ${found.what}: decompress it first (${found.undo} ${image}) and boot the result`);
    if (d.size === 0) throw refused('is empty: it is no disk image');
    const ext = path.extname(image).toLowerCase();
    const named = claimed ?? EXTENSIONS[ext];
    if (named === undefined) {
      throw refused(`has ${ext ? `the unknown extension ${ext}` : 'no extension'} and holds ${found.what}: name it ${Object.keys(EXTENSIONS).join(', ')} (or give the format)`);
    } else if (named === 'raw') {
      // Raw has no magic to check, so the one thing every disk SeaBIOS boots has is asked for.
      if (!hasBootSignature(await d.read(0, 512))) {
        const hint = found.kind ? `; if it is a ${found.kind} image, name it ${extensionFor(found.kind)}` : '';
        throw refused(`is no bootable raw disk: its first sector does not end in the boot signature 55 AA (found ${found.what})${hint}`);
      }
    } else if (!found.kind || !KINDS[named].includes(found.kind)) {
      throw refused(`is not a ${named} image: found ${found.what}${found.kind ? ` (name it ${extensionFor(found.kind)})` : ''}`);
    }
    format = named;
    const why = await typeRefusal(format, d);
    if (why) throw refused(`${why}: boot takes only whole, self-contained images (one file, one layer)`);
  } catch (e) {
    if (e instanceof BootCheckError) throw e;
    throw new BootCheckError('input', `cannot read the image ${image}: ${messageOf(e)}`);
  } finally {
    await f.close();
  }
  requireConfinement();
  const root = await mkdtemp(path.join(tmpdir(), 'af-qemu-img-'));
  try {
    const info = await qemuImgInfo(resolved, format, { root, paths: [{ path: resolved }] }, signal).catch((e: unknown) => {
      // QEMU's message names the resolved path; the caller knows the image by the name it gave.
      if (e instanceof BootCheckError && e.kind === 'input' && resolved !== image) throw new BootCheckError('input', e.message.split(resolved).join(image));
      throw e;
    });
    if (info.format !== QEMU_FORMAT[format]) throw refused(`is read by QEMU as ${shown(info.format)}, not ${format}`);
    const why = infoRefusal(info, resolved, format);
    if (why) throw refused(`${why}: boot takes only whole, self-contained images (one file, one layer)`);
    return { name: image, path: resolved, format, virtualSize: info['virtual-size'], fileSize };
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

/** The format of a checked image (inspectImage without the details). */
export async function checkImage(image: string, claimed?: ImageFormat, signal?: AbortSignal): Promise<ImageFormat> {
  return (await inspectImage(image, claimed, signal)).format;
}
