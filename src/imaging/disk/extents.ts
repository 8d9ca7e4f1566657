// Where a sparse file holds data. Node has no lseek(SEEK_DATA), so the file's extent map is read
// with `filefrag` (e2fsprogs, FIEMAP ioctl; `-s` syncs the file first so delayed writes are
// mapped). Outside the extents the file is a hole and reads as zeros, so the QCOW2 scan can skip it,
// as `qemu-img convert` does with SEEK_DATA. When the host filesystem cannot say (tmpfs, say), the
// answer is null and the caller reads everything.
import { runToolOutput } from '../run';

/** Byte ranges `[start, end)`, sorted, that may hold data. */
export type Ranges = readonly (readonly [number, number])[];

/** The most extents accepted; a file more fragmented than this is simply scanned whole. */
const MAX_EXTENTS = 1_000_000;

export function parseFilefrag(text: string): Ranges | null {
  const head = /File size of .* is (\d+) \((\d+) blocks? of (\d+) bytes\)/.exec(text);
  if (!head) return null;
  const blockSize = Number(head[3]);
  const ranges: [number, number][] = [];
  for (const m of text.matchAll(/^\s*\d+:\s+(\d+)\.\.\s*(\d+):/gm)) {
    if (ranges.length >= MAX_EXTENTS) return null;
    const start = Number(m[1]) * blockSize;
    const end = (Number(m[2]) + 1) * blockSize;
    const last = ranges[ranges.length - 1];
    if (last && start < last[0]) return null; // not sorted: do not trust it
    if (last && start <= last[1]) last[1] = Math.max(last[1], end);
    else ranges.push([start, end]);
  }
  const found = /: (\d+) extents? found/.exec(text);
  if (!found || (Number(found[1]) > 0 && ranges.length === 0)) return null;
  return ranges;
}

export async function dataRanges(path: string, signal?: AbortSignal): Promise<Ranges | null> {
  try {
    return parseFilefrag(await runToolOutput('filefrag', ['-s', '-v', path], { signal }));
  } catch (e) {
    if (signal?.aborted) throw e;
    return null;
  }
}
