// What an image's bytes say it is, from the magic numbers each format keeps at a fixed place, read by
// Node: never by qemu-img or QEMU's probing, which a crafted first sector steers.
import type { DiskBytes } from './disk-bytes';
import { hasControl } from '../../model/text-rules';

/** The disk formats a magic names (a VMDK is a binary sparse file or a text descriptor). */
export type DiskKind = 'qcow2' | 'vmdk' | 'vmdk-descriptor' | 'vdi' | 'vhd';

export interface Found {
  /** Absent: nothing the boot check takes. */
  readonly kind?: DiskKind;
  /** What was found, for a message: "a qcow2 header", "text", "gzip-compressed data". */
  readonly what: string;
  /** For compressed data: the command that undoes it. */
  readonly undo?: string;
}

const HEAD_BYTES = 4096;
const VHD_FOOTER_BYTES = 512;

const ascii = (s: string): Buffer => Buffer.from(s, 'latin1');
const at = (buf: Buffer, offset: number, magic: Buffer): boolean => buf.length >= offset + magic.length && buf.subarray(offset, offset + magic.length).equals(magic);

const COMPRESSED: ReadonlyArray<{ magic: Buffer; name: string; undo: string }> = [
  { magic: Buffer.from([0x1f, 0x8b]), name: 'gzip', undo: 'gunzip -k' },
  { magic: Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]), name: 'xz', undo: 'unxz -k' },
  { magic: Buffer.from([0x28, 0xb5, 0x2f, 0xfd]), name: 'zstd', undo: 'unzstd' },
  { magic: ascii('BZh'), name: 'bzip2', undo: 'bunzip2 -k' },
];

const MAGIC: ReadonlyArray<{ offset: number; magic: Buffer; found: Found }> = [
  { offset: 0, magic: ascii('QFI\xfb'), found: { kind: 'qcow2', what: 'a qcow2 header' } },
  { offset: 0, magic: ascii('KDMV'), found: { kind: 'vmdk', what: 'a VMDK sparse header' } },
  { offset: 0, magic: ascii('COWD'), found: { what: 'a VMware 3 (COWD) header' } },
  { offset: 0, magic: ascii('conectix'), found: { kind: 'vhd', what: 'a VHD footer' } },
  { offset: 0, magic: ascii('vhdxfile'), found: { what: 'a VHDX header' } },
  // The VDI signature 0xbeda107f, little-endian, after the 64-byte text pre-header.
  { offset: 0x40, magic: Buffer.from([0x7f, 0x10, 0xda, 0xbe]), found: { kind: 'vdi', what: 'a VDI header' } },
];

/** Text: no NUL and no control characters but tab, line ends and form feed (UTF-8 passes). */
const isText = (buf: Buffer): boolean => !hasControl(buf.toString('latin1'), '\t\n\f\r');

export async function sniffDisk(d: DiskBytes): Promise<Found> {
  if (d.size === 0) return { what: 'nothing (an empty file)' };
  const head = await d.read(0, HEAD_BYTES);
  for (const c of COMPRESSED) if (at(head, 0, c.magic)) return { what: `${c.name}-compressed data`, undo: c.undo };
  for (const m of MAGIC) if (at(head, m.offset, m.magic)) return m.found;
  // A fixed VHD is a raw disk with the footer at its end (a dynamic one has a copy at the start).
  if (d.size >= VHD_FOOTER_BYTES && at(await d.read(d.size - VHD_FOOTER_BYTES, 8), 0, ascii('conectix'))) return { kind: 'vhd', what: 'a VHD footer' };
  if (isText(head)) {
    const text = head.toString('latin1');
    if (/^\s*#\s*Disk DescriptorFile/im.test(text) || /^\s*createType\s*=/m.test(text)) return { kind: 'vmdk-descriptor', what: 'a VMDK descriptor (text)' };
    return { what: 'text' };
  }
  if (hasBootSignature(head)) return { what: 'a boot sector (a raw disk)' };
  return { what: 'no known disk header' };
}

/** The MBR boot signature 55 AA ending the first sector: SeaBIOS boots no disk without it (GPT disks keep it in their protective MBR). */
export function hasBootSignature(head: Buffer): boolean {
  return head.length >= 512 && head[510] === 0x55 && head[511] === 0xaa;
}
