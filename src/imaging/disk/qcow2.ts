// QCOW2 version 3 written natively (format spec: qemu docs/interop/qcow2.txt), so that QCOW2 needs
// nothing beyond Node and e2fsprogs. Two passes over the raw disk, with memory bounded by one read chunk plus a
// bitmap of one bit per 64 KiB cluster:
//   1. scan: find the clusters that hold a non-zero byte (only those are allocated), reading only
//      the file's extents when the host filesystem reports them (extents.ts);
//   2. write, strictly in file order, so the output can be a stream (hashed, gzipped as it goes):
//      header | L1 table | refcount table | refcount blocks | L2 tables | data clusters (guest order).
// Every host cluster is used exactly once, so all refcounts are 1 and every L1/L2 entry carries
// the COPIED flag (qcow2.txt "L1 table entry" bit 63), which `qemu-img check` verifies.
import { open, type FileHandle } from 'node:fs/promises';
import { AbortedError } from '../../errors';
import { ImagingError } from '../errors';
import { dataRanges, type Ranges } from './extents';

const CLUSTER_BITS = 16;
export const QCOW2_CLUSTER = 1 << CLUSTER_BITS;
/** 8-byte entries per L2 table (one cluster): one L2 table maps 512 MiB of guest. */
const L2_ENTRIES = QCOW2_CLUSTER / 8;
/** refcount_order 4: 16-bit refcounts, 32768 per refcount block. */
const REFCOUNT_ORDER = 4;
const REFS_PER_BLOCK = (QCOW2_CLUSTER * 8) >> REFCOUNT_ORDER;
const HEADER_LENGTH = 104; // version 3 header, no compression-type field (qcow2.txt "Header")
const QCOW_MAGIC = 0x514649fb; // "QFI\xfb"
const COPIED = 1n << 63n;
/** Clusters read per call: large reads, flat memory. */
const CHUNK_CLUSTERS = 64;
const CHUNK = CHUNK_CLUSTERS * QCOW2_CLUSTER;
const ZERO_CHUNK = Buffer.alloc(CHUNK);
const ZERO_CLUSTER = ZERO_CHUNK.subarray(0, QCOW2_CLUSTER);

/** Which guest clusters hold data: one bit each. */
export interface AllocationMap {
  readonly clusters: number;
  readonly bits: Uint8Array;
  readonly allocated: number;
}

function isSet(map: AllocationMap, i: number): boolean {
  return (map.bits[i >> 3]! & (1 << (i & 7))) !== 0;
}

export interface Qcow2Progress {
  readonly phase: 'scan' | 'write';
  readonly done: number;
  readonly total: number;
}

export interface Qcow2Options {
  readonly signal?: AbortSignal | undefined;
  readonly onProgress?: (p: Qcow2Progress) => void;
  /**
   * The data is read into one buffer, reused: each yielded buffer is valid only until the next is asked
   * for (a consumer that copies it at once, as writeBeside does). A fresh buffer per read costs a page
   * fault per 4 KiB of it, most of the write pass's time.
   */
  readonly reuseBuffer?: boolean | undefined;
}

function checkAbort(signal?: AbortSignal): void {
  if (signal?.aborted) throw new AbortedError('image build aborted');
}

/** Read `length` bytes at `position`; past the end of the file reads as zeros. */
async function readAt(fh: FileHandle, buf: Buffer, length: number, position: number): Promise<void> {
  let got = 0;
  for (let tries = 0; got < length && tries < 1024; tries++) {
    const { bytesRead } = await fh.read(buf, got, length - got, position + got);
    if (bytesRead === 0) break;
    got += bytesRead;
  }
  buf.fill(0, got, length);
}

/** Cluster runs `[first, end)` to read: the given byte ranges widened to whole clusters, or everything. */
function clusterRuns(virtualSize: number, ranges: Ranges | null | undefined): [number, number][] {
  const clusters = Math.ceil(virtualSize / QCOW2_CLUSTER);
  if (!ranges) return [[0, clusters]];
  const runs: [number, number][] = [];
  for (const [start, end] of ranges) {
    const first = Math.floor(start / QCOW2_CLUSTER);
    const last = Math.min(clusters, Math.ceil(end / QCOW2_CLUSTER));
    if (first >= last) continue;
    const prev = runs[runs.length - 1];
    if (prev && first <= prev[1]) prev[1] = Math.max(prev[1], last);
    else runs.push([first, last]);
  }
  return runs;
}

/**
 * Pass 1: the clusters of the raw disk that are not all zeros. With `ranges` (where the file may
 * hold data, see extents.ts) only those are read; the rest are holes.
 */
export async function scanAllocated(fh: FileHandle, virtualSize: number, opts: Qcow2Options & { ranges?: Ranges | null } = {}): Promise<AllocationMap> {
  const clusters = Math.ceil(virtualSize / QCOW2_CLUSTER);
  const bits = new Uint8Array(Math.ceil(clusters / 8));
  const buf = Buffer.allocUnsafe(CHUNK);
  const runs = clusterRuns(virtualSize, opts.ranges);
  const total = runs.reduce((n, [a, b]) => n + (b - a), 0) * QCOW2_CLUSTER;
  let allocated = 0;
  let done = 0;
  for (const [runStart, runEnd] of runs) {
    for (let first = runStart; first < runEnd; first += CHUNK_CLUSTERS) {
      checkAbort(opts.signal);
      const n = Math.min(CHUNK_CLUSTERS, runEnd - first);
      const pos = first * QCOW2_CLUSTER;
      const len = Math.min(n * QCOW2_CLUSTER, virtualSize - pos);
      await readAt(fh, buf, len, pos);
      done += n * QCOW2_CLUSTER;
      opts.onProgress?.({ phase: 'scan', done, total });
      if (len === CHUNK && buf.equals(ZERO_CHUNK)) continue; // a whole chunk of zeros
      for (let k = 0; k < n; k++) {
        const start = k * QCOW2_CLUSTER;
        const end = Math.min(start + QCOW2_CLUSTER, len);
        if (ZERO_CLUSTER.compare(buf, start, end, 0, end - start) === 0) continue;
        const i = first + k;
        bits[i >> 3]! |= 1 << (i & 7);
        allocated++;
      }
    }
  }
  return { clusters, bits, allocated };
}

/** Host offsets of every part, in clusters; all are laid out back to back in this order. */
export interface Qcow2Layout {
  readonly virtualSize: number;
  readonly l1Entries: number;
  readonly l1Clusters: number;
  readonly rtClusters: number;
  readonly rbCount: number;
  readonly l2Count: number;
  readonly dataCount: number;
  readonly l1Start: number;
  readonly rtStart: number;
  readonly rbStart: number;
  readonly l2Start: number;
  readonly dataStart: number;
  readonly totalClusters: number;
}

function l2RegionUsed(map: AllocationMap, region: number): boolean {
  const end = Math.min(map.clusters, (region + 1) * L2_ENTRIES);
  for (let i = region * L2_ENTRIES; i < end; i += 8) {
    // whole bytes of the bitmap at a time (a region is a multiple of 8 clusters)
    if (map.bits[i >> 3] !== 0) return true;
  }
  return false;
}

export function qcow2Layout(virtualSize: number, map: AllocationMap): Qcow2Layout {
  const l1Entries = Math.ceil(map.clusters / L2_ENTRIES);
  const l1Clusters = Math.max(1, Math.ceil((l1Entries * 8) / QCOW2_CLUSTER));
  let l2Count = 0;
  for (let r = 0; r < l1Entries; r++) if (l2RegionUsed(map, r)) l2Count++;
  const fixed = 1 + l1Clusters + l2Count + map.allocated;
  // The refcount structures count themselves too: grow them until they cover everything (converges
  // in two or three rounds; the bound only guards the loop).
  let rbCount = 1;
  let rtClusters = 1;
  for (let round = 0; round < 32; round++) {
    const total = fixed + rtClusters + rbCount;
    const rb = Math.ceil(total / REFS_PER_BLOCK);
    const rt = Math.max(1, Math.ceil((rb * 8) / QCOW2_CLUSTER));
    if (rb === rbCount && rt === rtClusters) break;
    rbCount = Math.max(rb, rbCount);
    rtClusters = Math.max(rt, rtClusters);
  }
  const l1Start = 1;
  const rtStart = l1Start + l1Clusters;
  const rbStart = rtStart + rtClusters;
  const l2Start = rbStart + rbCount;
  const dataStart = l2Start + l2Count;
  const totalClusters = dataStart + map.allocated;
  if (totalClusters > rbCount * REFS_PER_BLOCK) throw new ImagingError('tool', 'qcow2 layout: refcount blocks do not cover the image');
  return { virtualSize, l1Entries, l1Clusters, rtClusters, rbCount, l2Count, dataCount: map.allocated, l1Start, rtStart, rbStart, l2Start, dataStart, totalClusters };
}

const offsetOf = (cluster: number): bigint => BigInt(cluster) * BigInt(QCOW2_CLUSTER);

function header(l: Qcow2Layout): Buffer {
  const h = Buffer.alloc(QCOW2_CLUSTER); // zeros: no backing file, no encryption, no snapshots, no features
  h.writeUInt32BE(QCOW_MAGIC, 0);
  h.writeUInt32BE(3, 4); // version
  h.writeUInt32BE(CLUSTER_BITS, 20);
  h.writeBigUInt64BE(BigInt(l.virtualSize), 24);
  h.writeUInt32BE(l.l1Entries, 36);
  h.writeBigUInt64BE(offsetOf(l.l1Start), 40);
  h.writeBigUInt64BE(offsetOf(l.rtStart), 48);
  h.writeUInt32BE(l.rtClusters, 56);
  h.writeUInt32BE(REFCOUNT_ORDER, 96);
  h.writeUInt32BE(HEADER_LENGTH, 100);
  // Header extensions follow at 104: the zeros there are the end-of-extensions marker.
  return h;
}

/**
 * Pass 2 as a stream of buffers in file order. Each yielded buffer is fresh (the consumer may
 * hold it while the next is read), unless `reuseBuffer` says otherwise for the data.
 */
export async function* qcow2Chunks(fh: FileHandle, map: AllocationMap, layout: Qcow2Layout, opts: Qcow2Options = {}): AsyncGenerator<Buffer> {
  const total = layout.totalClusters * QCOW2_CLUSTER;
  let done = 0;
  const emit = (b: Buffer): Buffer => {
    done += b.length;
    opts.onProgress?.({ phase: 'write', done, total });
    return b;
  };
  yield emit(header(layout));

  const l1 = Buffer.alloc(layout.l1Clusters * QCOW2_CLUSTER);
  for (let r = 0, next = layout.l2Start; r < layout.l1Entries; r++) {
    if (l2RegionUsed(map, r)) l1.writeBigUInt64BE(offsetOf(next++) | COPIED, r * 8);
  }
  yield emit(l1);

  const rt = Buffer.alloc(layout.rtClusters * QCOW2_CLUSTER);
  for (let b = 0; b < layout.rbCount; b++) rt.writeBigUInt64BE(offsetOf(layout.rbStart + b), b * 8);
  yield emit(rt);

  for (let b = 0; b < layout.rbCount; b++) {
    checkAbort(opts.signal);
    const block = Buffer.alloc(QCOW2_CLUSTER);
    const end = Math.min(REFS_PER_BLOCK, layout.totalClusters - b * REFS_PER_BLOCK);
    for (let k = 0; k < end; k++) block.writeUInt16BE(1, k * 2);
    yield emit(block);
  }

  let dataCluster = layout.dataStart;
  for (let r = 0; r < layout.l1Entries; r++) {
    if (!l2RegionUsed(map, r)) continue;
    checkAbort(opts.signal);
    const l2 = Buffer.alloc(QCOW2_CLUSTER);
    const end = Math.min(map.clusters, (r + 1) * L2_ENTRIES);
    for (let i = r * L2_ENTRIES; i < end; i++) {
      if (isSet(map, i)) l2.writeBigUInt64BE(offsetOf(dataCluster++) | COPIED, (i - r * L2_ENTRIES) * 8);
    }
    yield emit(l2);
  }

  // Data: runs of allocated clusters, read in chunks of up to CHUNK bytes, in guest order (the
  // same order the L2 entries above were given their host clusters).
  const reused = opts.reuseBuffer ? Buffer.allocUnsafe(CHUNK) : undefined;
  for (let i = 0; i < map.clusters; ) {
    if (!isSet(map, i)) {
      i++;
      continue;
    }
    checkAbort(opts.signal);
    let n = 1;
    while (n < CHUNK_CLUSTERS && i + n < map.clusters && isSet(map, i + n)) n++;
    const buf = reused?.subarray(0, n * QCOW2_CLUSTER) ?? Buffer.allocUnsafe(n * QCOW2_CLUSTER);
    const pos = i * QCOW2_CLUSTER;
    await readAt(fh, buf, Math.min(buf.length, layout.virtualSize - pos), pos);
    buf.fill(0, Math.min(buf.length, layout.virtualSize - pos)); // pad the last cluster of an odd size
    yield emit(buf);
    i += n;
  }
}

/** The whole QCOW2 file for a raw disk, as a stream of buffers (both passes). */
export async function* qcow2FromRaw(rawPath: string, virtualSize: number, opts: Qcow2Options = {}): AsyncGenerator<Buffer> {
  if (virtualSize <= 0 || virtualSize % 512 !== 0) throw new ImagingError('input', `qcow2 virtual size must be a positive multiple of 512 bytes, got ${virtualSize}`);
  const fh = await open(rawPath, 'r');
  try {
    const ranges = await dataRanges(rawPath, opts.signal);
    const map = await scanAllocated(fh, virtualSize, { ...opts, ranges });
    yield* qcow2Chunks(fh, map, qcow2Layout(virtualSize, map), opts);
  } finally {
    await fh.close();
  }
}
