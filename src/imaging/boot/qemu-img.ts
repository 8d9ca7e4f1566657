// QEMU's own reading of an untrusted image, through qemu-img run confined to the image (host/confine.ts):
// what the image is and which files it names (`info`), how many bytes of data a range of its virtual
// disk holds (`map`), and a copy of one bounded range of that disk as raw bytes (`convert` of a `raw`
// node with an offset and a size). The format is always named and no backing file is opened
// (`backing: null`), so QEMU never probes; the confinement means that whatever else a header names, no
// host file can be read in its place.
import { run, type ChildFault } from '../../host/child';
import { confinedPrefix, type ConfineSpec } from '../../host/confine';
import { AbortedError, isForgeError } from '../../errors';
import { BootCheckError } from './errors';
import { QEMU_FORMAT, type ImageFormat } from './image-format';

/**
 * The image as QEMU block options: the format named, the protocol `file` named (a path never reads as
 * `nbd:…`), and for every format that can have one `backing: null`, so no backing file is opened
 * whatever the header says. `image` is an absolute path.
 */
export function blockdevOf(image: string, format: ImageFormat): Record<string, unknown> {
  return { driver: QEMU_FORMAT[format], ...(format === 'raw' ? {} : { backing: null }), file: { driver: 'file', filename: image } };
}

/** The `json:` filename of a block node, for qemu-img. */
const jsonName = (node: Record<string, unknown>): string => `json:${JSON.stringify(node)}`;

/** A line QEMU wrote, fit for a one-line message: its `json:{…}` names as `image`, control characters as \xNN. */
export function qemuSaid(text: string, image: string): string {
  const line = text.split('\n').map((l) => l.trim()).filter(Boolean).join('; ').replace(/^qemu-img: /, '');
  const named = line.replace(/'json:\{.*?\}'/g, `'${image}'`);
  return named.replace(/[^\x20-\x7e]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`).slice(0, 2000);
}

/** What `qemu-img info --output=json` says of an image (the fields the checks read; the rest is kept). */
export interface QemuImageInfo {
  readonly 'virtual-size': number;
  readonly format: string;
  readonly filename?: string;
  readonly 'backing-filename'?: string;
  readonly 'full-backing-filename'?: string;
  readonly snapshots?: readonly unknown[];
  readonly 'format-specific'?: {
    readonly type: string;
    readonly data?: {
      readonly 'data-file'?: string;
      readonly 'parent-cid'?: number;
      readonly extents?: ReadonlyArray<{ readonly filename?: string; readonly format?: string }>;
    };
  };
}

function inputFault(image: string, what: string) {
  return (f: ChildFault): BootCheckError => {
    if (f.kind === 'missing') return new BootCheckError('missing-tool', f.message);
    const said = f.kind === 'exit' && f.exit ? qemuSaid(f.exit.stderr, image) : f.message;
    return new BootCheckError('input', `${image} ${what}: ${said || 'qemu-img failed with no message'}`);
  };
}

/** qemu-img info of `image` as `format`, confined by `confine` (which must hold the image, read only). */
export async function qemuImgInfo(image: string, format: ImageFormat, confine: ConfineSpec, signal?: AbortSignal): Promise<QemuImageInfo> {
  const r = await run(
    { command: 'qemu-img', args: ['info', '--output=json', jsonName(blockdevOf(image, format))], within: confinedPrefix(confine), collect: true, signal },
    inputFault(image, `cannot be opened by QEMU as a ${format} image confined to this one file`),
  );
  let info: QemuImageInfo;
  try {
    info = JSON.parse(r.stdout) as QemuImageInfo;
  } catch {
    throw new BootCheckError('input', `${image}: qemu-img info printed no JSON`);
  }
  if (!Number.isSafeInteger(info['virtual-size']) || info['virtual-size'] <= 0) throw new BootCheckError('input', `${image} has no virtual size QEMU can read (${String(info['virtual-size'])})`);
  return info;
}

/**
 * The bound on what is copied out of an image's virtual disk (the direct-kernel path's root partition,
 * `diff`'s raw copy): the image file's size times DATA_RATIO, and at least DATA_FLOOR_BYTES. A
 * self-contained image holds at most its own size of data unless it is compressed (a qcow2 or a
 * streamOptimized VMDK: about 2 to 4 times for a Debian system); a crafted file (every cluster pointing at
 * one cluster of data, or compressed clusters of one repeated byte) claims far more, and is refused
 * before anything is written.
 */
export const DATA_RATIO = 8;
export const DATA_FLOOR_BYTES = 64 * 1024 * 1024;

export function dataLimit(fileSize: number): number {
  return Math.max(DATA_FLOOR_BYTES, DATA_RATIO * fileSize);
}

/** A range of the virtual disk, in bytes. */
export interface DiskRange {
  readonly offset: number;
  readonly length: number;
}

/** One line of `qemu-img map --output=json`: `[{ "start": …, "length": …, …, "zero": false, "data": true, … },`. */
function mapEntry(line: string): { length: number; data: boolean; zero: boolean } | undefined {
  const text = line.trim().replace(/^\[/, '').replace(/[,\]]+$/, '');
  if (!text.startsWith('{')) return undefined;
  try {
    const e = JSON.parse(text) as { length?: unknown; data?: unknown; zero?: unknown };
    return typeof e.length === 'number' ? { length: e.length, data: e.data === true, zero: e.zero === true } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The bytes of data QEMU would read from `range` (map entries with data that are not known zeros: what
 * `qemu-img convert` writes at most), counted as qemu-img prints them and stopped as soon as they pass
 * `limit`: then the answer is undefined, and qemu-img was killed. A crafted image whose clusters all
 * point at one cluster of data is stopped after `limit` bytes of its listing.
 */
export async function dataBytes(image: string, format: ImageFormat, range: DiskRange, limit: number, confine: ConfineSpec, signal?: AbortSignal): Promise<number | undefined> {
  const stop = new AbortController();
  const onAbort = (): void => stop.abort();
  signal?.addEventListener('abort', onAbort, { once: true });
  let total = 0;
  let pending = '';
  const count = (line: string): void => {
    const e = mapEntry(line);
    if (e && e.data && !e.zero) total += e.length;
    if (total > limit) stop.abort();
  };
  try {
    await run({
      command: 'qemu-img',
      args: ['map', '--output=json', `--start-offset=${range.offset}`, `--max-length=${range.length}`, jsonName(blockdevOf(image, format))],
      within: confinedPrefix(confine), signal: stop.signal,
      onStdout: (text) => {
        pending += text;
        const lines = pending.split('\n');
        pending = lines.pop() ?? '';
        if (!stop.signal.aborted) lines.forEach(count);
      },
    }, inputFault(image, 'cannot be mapped by QEMU'));
    count(pending);
  } catch (e) {
    if (!(isForgeError(e, AbortedError) && total > limit && !signal?.aborted)) throw e;
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
  return total > limit ? undefined : total;
}

/**
 * `range` of the virtual disk as a sparse raw file `out` (zeros are holes), by `qemu-img convert` of a
 * `raw` node with that offset and size over the image's own node. `out` must be in a writable folder
 * of `confine`.
 */
export async function copyRange(image: string, format: ImageFormat, range: DiskRange, out: string, confine: ConfineSpec, signal?: AbortSignal): Promise<void> {
  const node = { driver: 'raw', offset: range.offset, size: range.length, file: blockdevOf(image, format) };
  await run(
    { command: 'qemu-img', args: ['convert', '-O', 'raw', jsonName(node), out], within: confinedPrefix(confine), signal },
    inputFault(image, `cannot be read by QEMU (bytes ${range.offset} to ${range.offset + range.length})`),
  );
}
