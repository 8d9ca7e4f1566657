// Reading a file of an image tree the build does not trust: its parents are resolved beneath the tree
// as the image sees them (../tree.ts), the file itself is opened with O_NOFOLLOW (a link there is refused,
// never followed out of the tree), must be a regular file, and is read only up to a bound.
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { resolveParent } from '../tree';

export type TreeRead =
  | { readonly ok: true; readonly bytes: Buffer }
  | { readonly ok: false; readonly why: 'missing' | 'not-a-file' | 'too-large'; readonly size?: number };

/** An image path's content, or why it cannot be read; throws only on an I/O error other than these. */
export async function readTreeFile(tree: string, imagePath: string, maxBytes: number): Promise<TreeRead> {
  const segments = imagePath.split('/').filter((s) => s !== '' && s !== '.');
  let dir: string[];
  try {
    const parent = await resolveParent(tree, segments);
    if (parent.missing.length > 0) return { ok: false, why: 'missing' };
    dir = parent.dir;
  } catch {
    // A parent that is a file, or a loop of links: not a file this image has.
    return { ok: false, why: 'not-a-file' };
  }
  const host = join(tree, ...dir, segments[segments.length - 1]!);
  let fh;
  try {
    fh = await open(host, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { ok: false, why: 'missing' };
    if (code === 'ELOOP' || code === 'ENOTDIR' || code === 'ENXIO') return { ok: false, why: 'not-a-file' };
    throw e;
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) return { ok: false, why: 'not-a-file' };
    if (st.size > maxBytes) return { ok: false, why: 'too-large', size: st.size };
    // Read one byte past the bound: a file that grows after fstat is still refused.
    const buf = Buffer.alloc(Math.min(maxBytes, st.size) + 1);
    let n = 0;
    while (n < buf.length) {
      const { bytesRead } = await fh.read(buf, n, buf.length - n, n);
      if (bytesRead === 0) break;
      n += bytesRead;
    }
    if (n > maxBytes) return { ok: false, why: 'too-large', size: n };
    return { ok: true, bytes: buf.subarray(0, n) };
  } finally {
    await fh.close();
  }
}
