// The identifiers a disk carries (GPT disk and partition GUIDs, the ext4 UUID and directory hash seed,
// the FAT volume id). With a seed they are derived from it, so the same inputs give the same bytes;
// without one they are random, as the tools would pick them.
import { createHash, randomBytes } from 'node:crypto';

export interface DiskIds {
  /** GPT header's disk GUID. */
  readonly diskGuid: string;
  /** Unique GUIDs of the partitions: BIOS boot, EFI system, root. */
  readonly biosPartGuid: string;
  readonly espPartGuid: string;
  readonly rootPartGuid: string;
  /** `mke2fs -U`. */
  readonly rootFsUuid: string;
  /** `mke2fs -E hash_seed=` (a UUID). */
  readonly hashSeed: string;
  /** `mkfs.fat -i`: 8 hex digits. */
  readonly espVolumeId: string;
}

/** 16 bytes as an RFC 4122 UUID string (version 4 and variant bits set, so tools accept it). */
function uuidOf(bytes: Uint8Array): string {
  const b = Buffer.from(bytes.subarray(0, 16));
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** Ids of one disk: from `seed` (any string, e.g. a digest of the build's inputs), or random. */
export function diskIdsFrom(seed?: string): DiskIds {
  const bytes = (purpose: string): Buffer =>
    seed === undefined ? randomBytes(32) : createHash('sha256').update(`appliance-forge disk id\0${purpose}\0${seed}`).digest();
  return {
    diskGuid: uuidOf(bytes('gpt-disk')),
    biosPartGuid: uuidOf(bytes('gpt-bios')),
    espPartGuid: uuidOf(bytes('gpt-esp')),
    rootPartGuid: uuidOf(bytes('gpt-root')),
    rootFsUuid: uuidOf(bytes('ext4-uuid')),
    hashSeed: uuidOf(bytes('ext4-hash-seed')),
    espVolumeId: bytes('fat-volume-id').subarray(0, 4).toString('hex'),
  };
}
