// The qcow2 header fields that make QEMU read more than this file (big-endian): a backing file, an
// external data file (incompatible feature bit 2, or its header extension), and internal snapshots,
// which put more than one state of the disk in the file.
import { shown, type DiskBytes } from './disk-bytes';

const V2_HEADER_BYTES = 72;
const V3_HEADER_BYTES = 104;
const INCOMPAT_DATA_FILE = 1n << 2n;
const EXT_END = 0;
const EXT_DATA_FILE = 0x44415441;
/** The header and its extensions fit in the first cluster; clusters are at most 2 MiB. */
const MAX_CLUSTER_BITS = 21;
const MAX_NAME_BYTES = 1023;

/** Why this qcow2 image is not self-contained; undefined when it is. */
export async function qcow2Refusal(d: DiskBytes): Promise<string | undefined> {
  const h = await d.read(0, V3_HEADER_BYTES);
  if (h.length < V2_HEADER_BYTES) return 'is a truncated qcow2 image';
  const version = h.readUInt32BE(4);
  if (version !== 2 && version !== 3) return `is a qcow version ${version} image (qcow2 is version 2 or 3)`;
  const backingOffset = h.readBigUInt64BE(8);
  if (backingOffset !== 0n) {
    const name = await d.read(Number(backingOffset), Math.min(h.readUInt32BE(16), MAX_NAME_BYTES));
    return `is a qcow2 image with a backing file ${shown(name)}`;
  }
  const snapshots = h.readUInt32BE(60);
  if (snapshots > 0) return `is a qcow2 image with ${snapshots} internal snapshot${snapshots > 1 ? 's' : ''} (more than one layer)`;
  let extStart = V2_HEADER_BYTES;
  if (version === 3) {
    if (h.length < V3_HEADER_BYTES) return 'is a truncated qcow2 image';
    if ((h.readBigUInt64BE(72) & INCOMPAT_DATA_FILE) !== 0n) return 'is a qcow2 image with an external data file';
    extStart = h.readUInt32BE(100);
  }
  const extEnd = 2 ** Math.min(h.readUInt32BE(20), MAX_CLUSTER_BITS);
  const ext = await d.read(extStart, Math.max(0, extEnd - extStart));
  for (let off = 0; off + 8 <= ext.length;) {
    const type = ext.readUInt32BE(off);
    const len = ext.readUInt32BE(off + 4);
    if (type === EXT_END) break;
    if (type === EXT_DATA_FILE) return `is a qcow2 image with an external data file ${shown(ext.subarray(off + 8, off + 8 + Math.min(len, MAX_NAME_BYTES)))}`;
    off += 8 + Math.ceil(len / 8) * 8;
  }
  return undefined;
}
