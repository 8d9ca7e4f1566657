// VMDK data that lives outside this file: a descriptor (text) names its extents as other files
// (monolithicFlat's is any path of the host), and a sparse file's embedded descriptor can name a parent
// (parentFileNameHint, which QEMU opens as the backing file) or extents of other kinds. A single-file
// VMDK (monolithicSparse, streamOptimized) has one SPARSE extent: itself, read from this file whatever
// name the descriptor gives it, so a renamed image stays bootable.
import { shown, type DiskBytes } from './disk-bytes';

const SECTOR = 512;
/** QEMU reads a sparse file's parent hint from the descriptor at sector 1, up to 20 sectors. */
const EMBEDDED_AT = SECTOR;
const EMBEDDED_BYTES = 20 * SECTOR;
const MAX_DESCRIPTOR_BYTES = 1 << 20;
const NO_PARENT_CID = 'ffffffff';

const EXTENT = /^\s*(?:RW|RDONLY|NOACCESS)\s+\d+\s+(\S+)(?:\s+"([^"]*)")?/gm;

function textOf(buf: Buffer): string {
  const nul = buf.indexOf(0);
  return buf.subarray(0, nul < 0 ? buf.length : nul).toString('latin1');
}

/** Why the descriptor's extents or parent reach outside this file; undefined when they do not. */
function descriptorRefusal(text: string, embedded: boolean): string | undefined {
  const parent = /parentFileNameHint\s*=\s*"([^"]*)"?/.exec(text);
  if (parent) return `is a VMDK delta disk with the parent ${shown(parent[1] ?? '')}`;
  const cid = /^\s*parentCID\s*=\s*(\S+)/im.exec(text);
  if (cid && cid[1]?.toLowerCase() !== NO_PARENT_CID) return `is a VMDK delta disk (parentCID ${shown(cid[1] ?? '')})`;
  const extents = [...text.matchAll(EXTENT)].map((m) => ({ type: m[1] ?? '', file: m[2] }));
  const named = extents.map((e) => (e.file !== undefined ? `${e.type} ${shown(e.file)}` : e.type)).join(', ');
  if (!embedded) return `is a VMDK descriptor: its data is in other files (${named || 'no extent'})`;
  if (extents.length > 1 || extents.some((e) => e.type !== 'SPARSE')) return `is a VMDK image whose descriptor names other extents (${named})`;
  return undefined;
}

export async function vmdkRefusal(d: DiskBytes, descriptorFile: boolean): Promise<string | undefined> {
  if (descriptorFile) return descriptorRefusal(textOf(await d.read(0, MAX_DESCRIPTOR_BYTES)), false);
  const h = await d.read(0, 44);
  if (h.length < 44) return 'is a truncated VMDK image';
  // The descriptor the header points at (little-endian sector offset and count), and the one QEMU reads.
  const at = Number(h.readBigUInt64LE(28)) * SECTOR;
  const bytes = Math.min(Number(h.readBigUInt64LE(36)) * SECTOR, MAX_DESCRIPTOR_BYTES);
  const texts = [textOf(await d.read(EMBEDDED_AT, EMBEDDED_BYTES))];
  if (at !== 0 && at !== EMBEDDED_AT) texts.push(textOf(await d.read(at, bytes)));
  for (const t of texts) {
    const why = descriptorRefusal(t, true);
    if (why) return why;
  }
  return undefined;
}
