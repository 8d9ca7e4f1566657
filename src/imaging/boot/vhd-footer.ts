// VHD disk types (the big-endian field at 60 of the 512-byte footer): a differencing disk (4) takes its
// unchanged sectors from a parent file named in its header, so only fixed (2) and dynamic (3) are taken.
import type { DiskBytes } from './disk-bytes';

const FOOTER_BYTES = 512;
const FIXED = 2;
const DYNAMIC = 3;
const DIFFERENCING = 4;

export async function vhdRefusal(d: DiskBytes): Promise<string | undefined> {
  if (d.size < FOOTER_BYTES) return 'is a truncated VHD image';
  // QEMU reads the footer copy at the start first, then the one at the end: both are checked.
  for (const offset of [0, d.size - FOOTER_BYTES]) {
    const f = await d.read(offset, FOOTER_BYTES);
    if (f.subarray(0, 8).toString('latin1') !== 'conectix') continue;
    const type = f.readUInt32BE(60);
    if (type === DIFFERENCING) return 'is a VHD differencing disk (its parent is another file)';
    if (type !== FIXED && type !== DYNAMIC) return `is a VHD of disk type ${type} (fixed and dynamic disks are taken)`;
  }
  return undefined;
}
