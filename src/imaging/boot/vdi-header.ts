// VDI image types (the little-endian field at 0x4c): undo (3) and differencing (4) images hold changes
// to another image, so only normal (1, dynamic) and fixed (2) images are taken.
import type { DiskBytes } from './disk-bytes';

const NORMAL = 1;
const FIXED = 2;
const DIFFERENCING = 4;

export async function vdiRefusal(d: DiskBytes): Promise<string | undefined> {
  const h = await d.read(0, 0x50);
  if (h.length < 0x50) return 'is a truncated VDI image';
  const type = h.readUInt32LE(0x4c);
  if (type === DIFFERENCING) return 'is a VDI differencing image (its parent is another file)';
  if (type !== NORMAL && type !== FIXED) return `is a VDI image of type ${type} (normal and fixed images are taken)`;
  return undefined;
}
