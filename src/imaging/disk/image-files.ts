// The manifest and the software files written straight into the root filesystem of a finished raw
// disk (the image's base disk, base-disk.ts), by one `debugfs -w` run as the build's namespace root: the
// filesystem is never mounted and the host never follows a path of it. Each destination is resolved
// beforehand against the base's index as the image sees it (../tree.ts, the same rule and errors as a
// tree on the host), so every path debugfs gets is a chain of real directories from the root.
import { constants } from 'node:fs';
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { BuildHost } from '../build-host';
import { ImagingError } from '../errors';
import { partitionDevice } from './filesystem';
import { reproducibleEnv, type Reproducible } from '../reproducible';
import type { PlacedFile } from '../system/staging';
import { indexLookup, resolveParent, type TreeIndex } from '../tree';

export interface ImageFilesOptions {
  /** The raw disk (its root partition's ext4 is written), in `scratchDir`. */
  readonly rawName: string;
  /** A private folder the namespace's root reaches: the disk, and the sources copied for debugfs. */
  readonly scratchDir: string;
  /** The base filesystem's paths (changed here as files are added). */
  readonly index: TreeIndex;
  readonly files: readonly PlacedFile[];
  /** Times of what is written: the epoch when reproducible (E2FSPROGS_FAKE_TIME), else the clock. */
  readonly reproducible?: Reproducible | undefined;
  readonly host: BuildHost;
  readonly signal?: AbortSignal | undefined;
}

/**
 * One argument of a debugfs command: its parser (ss) takes `"…"` with `""` for a quote. A control
 * character is refused whatever checked the name before: a newline would start a line of the request
 * with text of the user's (a line starting with `!` runs a shell).
 */
function arg(s: string): string {
  if (/\p{Cc}/u.test(s)) throw new ImagingError('input', `refused a path with a control character for debugfs: ${JSON.stringify(s)}`);
  return `"${s.replaceAll('"', '""')}"`;
}

/** An image path as debugfs gets it: always absolute, so never read as its `<inode>` syntax. */
function abs(segments: readonly string[]): string {
  return arg(`/${segments.join('/')}`);
}

/** The debugfs script that writes `files`, with the host copies of their sources it reads (relative to its cwd). */
export async function imageFilesScript(o: ImageFilesOptions): Promise<{ script: string; sources: { content: PlacedFile['content']; to: string }[] }> {
  const lookup = indexLookup(o.index);
  const time = `@${o.reproducible?.sourceDateEpoch ?? Math.floor(Date.now() / 1000)}`;
  const lines: string[] = [];
  const sources: { content: PlacedFile['content']; to: string }[] = [];
  const touched = new Map<string, string[]>();
  for (const [n, f] of o.files.entries()) {
    const { dir, missing } = await resolveParent(lookup, f.segments);
    const name = f.segments[f.segments.length - 1]!;
    touched.set(dir.join('/'), [...dir]);
    for (const m of missing) {
      // By its name in its parent (debugfs cannot mkdir a full path at the root).
      lines.push(`cd ${abs(dir)}`, `mkdir ${arg(m)}`);
      dir.push(m);
      lines.push( `sif ${abs(dir)} mode 040755`, `sif ${abs(dir)} uid 0`, `sif ${abs(dir)} gid 0`);
      o.index[dir.join('/')] = 'd';
    }
    const path = [...dir, name];
    const existing = await lookup(path);
    if (existing?.kind === 'dir') throw new ImagingError('input', `refused destination /${f.segments.join('/')}: it is a directory in the image`);
    if (existing !== undefined) lines.push(`rm ${abs(path)}`);
    const source = `files/${n}`;
    sources.push({ content: f.content, to: source });
    lines.push(`cd ${abs(dir)}`, `write ${arg(source)} ${arg(name)}`);
    lines.push(`sif ${abs(path)} mode 0${(0o100000 | f.mode).toString(8)}`, `sif ${abs(path)} uid ${f.owner.uid}`, `sif ${abs(path)} gid ${f.owner.gid}`);
    o.index[path.join('/')] = 'f';
  }
  // A directory whose entries changed is dated now, as the kernel would (then clamped to the epoch).
  for (const dir of touched.values()) lines.push(`sif ${abs(dir)} mtime ${time}`, `sif ${abs(dir)} ctime ${time}`);
  return { script: lines.join('\n') + '\n', sources };
}

/** Writes the files into the disk's root filesystem; a full filesystem is a 'disk-full' error. */
export async function writeImageFiles(o: ImageFilesOptions): Promise<void> {
  const { script, sources } = await imageFilesScript(o);
  // debugfs reads each source as the namespace's root: private copies in the scratch folder, its own.
  const folder = join(o.scratchDir, 'files');
  await mkdir(folder, { mode: 0o700 });
  await o.host.own(folder);
  for (const s of sources) {
    const to = join(o.scratchDir, s.to);
    if ('text' in s.content) await writeFile(to, s.content.text, { flag: 'wx', mode: 0o600 });
    else await copyFile(s.content.source, to, constants.COPYFILE_EXCL);
    await o.host.own(to);
  }
  const { stderr } = await o.host.run('debugfs', ['-w', '-f', '-', partitionDevice(o.rawName)], {
    cwd: o.scratchDir, signal: o.signal, input: script, env: reproducibleEnv(o.reproducible),
  });
  // debugfs exits 0 whatever a command says: its echo of each command (`debugfs: …`) and its banner
  // aside, stderr is a failure.
  const problems = stderr.split('\n').filter((l) => l.trim() !== '' && !/^debugfs(:| \d)/.test(l) && !/^Allocated inode: \d+$/.test(l));
  if (problems.length === 0) return;
  const said = problems.slice(0, 3).join('; ');
  if (/could not allocate|no free space|no space left|ext2fs_new_inode/i.test(said)) throw new ImagingError('disk-full', `the software files do not fit in the disk (debugfs: ${said})`);
  throw new ImagingError('tool', `debugfs could not write the software files: ${said}`);
}
