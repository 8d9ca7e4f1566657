// A DOS/MBR partition table with one Linux partition from 1 MiB to the end of the disk (the usual
// alignment of fdisk and parted). Layout: the classic MBR, 4 entries of 16 bytes at 446, 0x55AA at 510.
import { randomBytes } from 'node:crypto';
import { ImagingError } from './errors';

export const SECTOR = 512;
/** Start of the partition: 1 MiB (LBA 2048). */
export const PARTITION_OFFSET = 1024 * 1024;
const LINUX_PARTITION = 0x83;
/** LBA fields are 32 bits: the last sector a partition can reach. */
const MAX_LBA = 0xffff_ffff;

/** CHS address for a 255-head, 63-sector geometry; beyond cylinder 1023 the standard "max" triple. */
function chs(lba: number): [number, number, number] {
  const c = Math.floor(lba / (255 * 63));
  if (c > 1023) return [0xfe, 0xff, 0xff];
  const h = Math.floor(lba / 63) % 255;
  const s = (lba % 63) + 1;
  return [h, (s & 0x3f) | ((c >> 2) & 0xc0), c & 0xff];
}

/** The first sector of a disk of `diskBytes` bytes; `bootable` sets the active flag (0x80) that BIOS boot code looks for. */
export function mbrSector(diskBytes: number, bootable = false): Buffer {
  const first = PARTITION_OFFSET / SECTOR;
  const total = Math.floor(diskBytes / SECTOR);
  const count = total - first;
  if (count <= 0 || total - 1 > MAX_LBA) {
    throw new ImagingError('input', `a disk of ${diskBytes} bytes cannot hold an MBR partition from 1 MiB to its end`);
  }
  const mbr = Buffer.alloc(SECTOR);
  randomBytes(4).copy(mbr, 440); // disk signature
  const e = 446;
  mbr[e] = bootable ? 0x80 : 0x00;
  mbr.set(chs(first), e + 1);
  mbr[e + 4] = LINUX_PARTITION;
  mbr.set(chs(first + count - 1), e + 5);
  mbr.writeUInt32LE(first, e + 8);
  mbr.writeUInt32LE(count, e + 12);
  mbr[510] = 0x55;
  mbr[511] = 0xaa;
  return mbr;
}
