// Reading images back with the real tools: qemu-img (info, check, convert, compare), partx and
// e2fsprogs (debugfs, e2fsck) on the partition at its 1 MiB offset.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function tempDir(label: string): { path: string; cleanup(): void } {
  const path = mkdtempSync(join(tmpdir(), `af-imaging-${label}-`));
  return { path, cleanup: () => rmSync(path, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 }) };
}

export function qemuInfo(file: string): { format: string; 'virtual-size': number } {
  return JSON.parse(execFileSync('qemu-img', ['info', '--output=json', file], { encoding: 'utf8' })) as { format: string; 'virtual-size': number };
}

/** `qemu-img check` exit status and report (0 = consistent). */
export function qemuCheck(file: string, format: string): { status: number; out: string } {
  const r = spawnSync('qemu-img', ['check', '-f', format, file], { encoding: 'utf8' });
  return { status: r.status ?? -1, out: `${r.stdout}${r.stderr}` };
}

export function toRaw(file: string, format: string, out: string): string {
  execFileSync('qemu-img', ['convert', '-f', format, '-O', 'raw', file, out]);
  return out;
}

/** The partition table as partx reads it: [{start, sectors, type}]. */
export function partitions(raw: string): { start: number; sectors: number; type: string }[] {
  const out = execFileSync('partx', ['--show', '--bytes', '--noheadings', '--output', 'START,SECTORS,TYPE', raw], { encoding: 'utf8' });
  return out.trim().split('\n').map((l) => {
    const [start, sectors, type] = l.trim().split(/\s+/);
    return { start: Number(start), sectors: Number(sectors), type: type ?? '' };
  });
}

const PART = (raw: string): string => `${raw}?offset=${1024 * 1024}`;
/** debugfs argument quoting (ss library): `"…"`, a quote inside doubled. */
const q = (path: string): string => `"${path.replace(/"/g, '""')}"`;

export function debugfsCat(raw: string, path: string): Buffer {
  return execFileSync('debugfs', ['-R', `cat ${q(path)}`, PART(raw)], { stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 1 << 30 });
}

/** Type, permission bits, owner and size of an inode, from `debugfs -R stat`. */
export function debugfsStat(raw: string, path: string): { type: string; mode: number; uid: number; gid: number; size: number } {
  const out = execFileSync('debugfs', ['-R', `stat ${q(path)}`, PART(raw)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const type = /Type:\s+(\w+)/.exec(out);
  const mode = /Mode:\s+(\d+)/.exec(out);
  const owner = /User:\s+(\d+)\s+Group:\s+(\d+)/.exec(out);
  const size = /Size:\s+(\d+)/.exec(out);
  if (!type || !mode || !owner || !size) throw new Error(`debugfs stat ${path}: ${out}`);
  return { type: type[1]!, mode: parseInt(mode[1]!, 8), uid: Number(owner[1]), gid: Number(owner[2]), size: Number(size[1]) };
}

export function e2fsck(raw: string): { status: number; out: string } {
  const r = spawnSync('e2fsck', ['-fn', PART(raw)], { encoding: 'utf8' });
  return { status: r.status ?? -1, out: `${r.stdout}${r.stderr}` };
}

export function fsType(raw: string): string {
  return execFileSync('blkid', ['-p', '-O', String(1024 * 1024), '-s', 'TYPE', '-o', 'value', raw], { encoding: 'utf8' }).trim();
}

export function filesIn(dir: string): string[] {
  return readdirSync(dir, { recursive: true }).map(String).sort();
}
