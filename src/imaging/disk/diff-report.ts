// What two disk images' differences are and how a person reads them (disk/diff.ts finds them): the
// file differences first, then the partition table's and the filesystem's own fields.
import { hasControl } from '../../model/text-rules';

/** One field that differs; `null`: absent on that side (a file only in one image). */
export interface Difference {
  /**
   * `file`: a path added or removed, or a file's type, mode, owner, size, contents, times or attributes;
   * `metadata`: the partition table's and the filesystem's own fields (UUIDs, free blocks, hash seed, ...).
   */
  readonly kind: 'file' | 'metadata';
  readonly section: 'partition table' | 'superblock' | 'files';
  /** The field, or `PATH: field` for a file. */
  readonly name: string;
  readonly a: string | null;
  readonly b: string | null;
}

export interface ImageDiff {
  /** No differences (with `filesOnly`: no file differences). */
  readonly identical: boolean;
  /** Only file differences were compared (`diff --files`). */
  readonly filesOnly: boolean;
  /** The first differences, in order: files by path, then the metadata (partition table, superblock). */
  readonly differences: readonly Difference[];
  /** How many more were found and not listed. */
  readonly more: number;
  /** How many differences of each kind were found, listed or not (metadata 0 with `filesOnly`). */
  readonly counts: { readonly files: number; readonly metadata: number };
  readonly files: { readonly a: number; readonly b: number };
}

export interface DiffOptions {
  readonly signal?: AbortSignal | undefined;
  /** Differences listed (default 20). */
  readonly max?: number | undefined;
  /** Only the files' differences, none of the partition table's or the filesystem's own fields. */
  readonly filesOnly?: boolean | undefined;
  /** Scratch folder parent (default the OS temp folder); a raw copy of a non-raw image goes there. */
  readonly workDir?: string | undefined;
}

/** A field's value by name: a file's, the partition table's or the superblock's. */
export type Fields = Map<string, string>;

/** Characters of one value shown. */
const MAX_SHOWN = 200;

/** A value as printed: bounded, control characters escaped. */
export function shownValue(v: string | null): string {
  if (v === null) return '(absent)';
  const s = hasControl(v) ? JSON.stringify(v) : v;
  return s.length > MAX_SHOWN ? `${s.slice(0, MAX_SHOWN)}…` : s;
}

const plural = (n: number): string => `${n} difference${n === 1 ? '' : 's'}`;

/**
 * The report a person reads: the file differences (one line each), then the metadata's under a heading
 * of their own, or `identical`.
 */
export function diffText(d: ImageDiff): string {
  if (d.identical) return d.filesOnly ? `no file differences (${d.files.a} files)\n` : `identical (${d.files.a} files)\n`;
  const line = (x: Difference): string => `  ${x.kind === 'file' ? '' : `${x.section}: `}${shownValue(x.name)}: ${shownValue(x.a)} ≠ ${shownValue(x.b)}`;
  const lines: string[] = [];
  const listed = { file: d.differences.filter((x) => x.kind === 'file'), metadata: d.differences.filter((x) => x.kind === 'metadata') };
  if (d.counts.files > 0) lines.push(`files (${plural(d.counts.files)}):`, ...listed.file.map(line));
  if (d.counts.metadata > 0) lines.push(`partition table and filesystem metadata (${plural(d.counts.metadata)}):`, ...listed.metadata.map(line));
  if (d.more > 0) lines.push(`… and ${d.more} more difference${d.more === 1 ? '' : 's'} (--max)`);
  return `${lines.join('\n')}\n`;
}

export function compareFields(section: Difference['section'], prefix: string, a: Fields, b: Fields): Difference[] {
  const out: Difference[] = [];
  const kind = section === 'files' ? 'file' : 'metadata';
  for (const k of new Set([...a.keys(), ...b.keys()])) {
    const x = a.get(k) ?? null;
    const y = b.get(k) ?? null;
    if (x !== y) out.push({ kind, section, name: `${prefix}${k}`, a: x, b: y });
  }
  return out;
}

export function compareFiles(a: Map<string, Fields>, b: Map<string, Fields>): Difference[] {
  const out: Difference[] = [];
  for (const path of [...new Set([...a.keys(), ...b.keys()])].sort()) {
    const x = a.get(path);
    const y = b.get(path);
    if (!x || !y) out.push({ kind: 'file', section: 'files', name: path, a: x ? 'present' : null, b: y ? 'present' : null });
    else out.push(...compareFields('files', `${path}: `, x, y));
  }
  return out;
}
