// Reading an image's bytes for its format checks: bounded reads at any offset of an open file, so a
// header that points far into a multi-GiB file costs one small read, never a load of the file.
import type { FileHandle } from 'node:fs/promises';

export interface DiskBytes {
  readonly size: number;
  /** Up to `length` bytes from `offset` (fewer at the end of the file, none past it). */
  read(offset: number, length: number): Promise<Buffer>;
}

export function diskBytesOf(f: FileHandle, size: number): DiskBytes {
  return {
    size,
    read: async (offset, length) => {
      const n = Math.max(0, Math.min(length, size - offset));
      if (n <= 0 || offset < 0 || !Number.isSafeInteger(offset)) return Buffer.alloc(0);
      const buf = Buffer.alloc(n);
      const { bytesRead } = await f.read(buf, 0, n, offset);
      return buf.subarray(0, bytesRead);
    },
  };
}

/**
 * Bytes found in an image (a file name, a descriptor value), fit for a one-line message: the image is
 * untrusted, so anything but printable ASCII (a newline, a terminal escape) is shown as \xNN, and the
 * length is capped.
 */
export function shown(bytes: Buffer | string, max = 120): string {
  const text = typeof bytes === 'string' ? bytes : bytes.toString('latin1');
  const cut = text.length > max ? `${text.slice(0, max)}...` : text;
  return `"${cut.replace(/[^\x20-\x7e]|["\\]/g, (c) => (c === '"' || c === '\\' ? `\\${c}` : `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`))}"`;
}
