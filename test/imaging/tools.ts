// Reading images back with the real tools: qemu-img (info, check, convert, compare), sfdisk and
// e2fsprogs (debugfs, e2fsck) on the root partition at its offset.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { currentSandbox, hostId } from '../../src/host/sandbox';
import type { SystemSettings } from '../../src/imaging';
import { ROOT_OFFSET } from '../../src/imaging/disk/gpt';

export function tempDir(label: string): { path: string; cleanup(): void } {
  const path = mkdtempSync(join(tmpdir(), `af-imaging-${label}-`));
  chmodSync(path, 0o711); // the build's user namespace root passes through (host/sandbox.ts)
  return { path, cleanup: () => rmSync(path, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 }) };
}

export interface QemuInfo {
  readonly format: string;
  readonly 'virtual-size': number;
  readonly 'format-specific'?: { readonly type: string; readonly data: Readonly<Record<string, unknown>> };
}

/** `qemu-img info`; give `format` where probing cannot tell (a fixed VHD has no header, only a footer). */
export function qemuInfo(file: string, format?: string): QemuInfo {
  return JSON.parse(execFileSync('qemu-img', ['info', '--output=json', ...(format ? ['-f', format] : []), file], { encoding: 'utf8' })) as QemuInfo;
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

export interface PartitionTable {
  readonly label: string;
  readonly id: string;
  readonly partitions: readonly { start: number; size: number; type: string; uuid: string; name?: string }[];
}

/** The partition table as sfdisk reads it (sectors; GUIDs upper-case). */
export function partitionTable(raw: string): PartitionTable {
  return (JSON.parse(execFileSync('sfdisk', ['--json', raw], { encoding: 'utf8' })) as { partitiontable: PartitionTable }).partitiontable;
}

const PART = (raw: string): string => `${raw}?offset=${ROOT_OFFSET}`;
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

/** `dumpe2fs -h` of the root filesystem: its superblock fields by name. */
export function superblock(raw: string): Record<string, string> {
  const out = execFileSync('dumpe2fs', ['-h', PART(raw)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  return Object.fromEntries(out.split('\n').flatMap((l) => {
    const m = /^([^:]+):\s+(.*)$/.exec(l);
    return m ? [[m[1]!, m[2]!.trim()]] : [];
  }));
}

export function e2fsck(raw: string): { status: number; out: string } {
  const r = spawnSync('e2fsck', ['-fn', PART(raw)], { encoding: 'utf8' });
  return { status: r.status ?? -1, out: `${r.stdout}${r.stderr}` };
}

export function fsType(raw: string): string {
  return execFileSync('blkid', ['-p', '-O', String(ROOT_OFFSET), '-s', 'TYPE', '-o', 'value', raw], { encoding: 'utf8' }).trim();
}

export function filesIn(dir: string): string[] {
  return readdirSync(dir, { recursive: true }).map(String).sort();
}

/**
 * A tiny OS tree for the tests of disk writing (formats, abort, memory, input), where booting is not
 * what is tested: the accounts files, one time zone and stand-ins for the kernel and initramfs. The bootable pipeline on a real Debian layer is in
 * system.test.ts.
 */
export function fakeTree(dir: string): string {
  const tree = join(dir, 'fake-os');
  mkdirSync(join(tree, 'etc'), { recursive: true });
  writeFileSync(join(tree, 'etc/passwd'), 'root:x:0:0:root:/root:/bin/sh\n');
  writeFileSync(join(tree, 'etc/group'), 'root:x:0:\nweb:x:1500:\n');
  mkdirSync(join(tree, 'root'), { mode: 0o700 });
  mkdirSync(join(tree, 'usr/share/zoneinfo/Etc'), { recursive: true });
  copyFileSync('/usr/share/zoneinfo/Etc/UTC', join(tree, 'usr/share/zoneinfo/Etc/UTC'));
  writeFileSync(join(tree, 'vmlinuz'), 'not a kernel: this tree is not booted\n');
  writeFileSync(join(tree, 'initrd.img'), 'not an initramfs\n');
  // Owned as an OS layer is: by root of the build's namespace.
  const s = currentSandbox();
  execFileSync('chown', ['-R', `${hostId(s, 0, 'uid')}:${hostId(s, 0, 'gid')}`, tree]);
  return tree;
}

/** Options of a build on a fake tree (see fakeTree): no users, no swap, default settings. */
export function fakeOs(tree: string, diskMiB = 1024): { layerDir: string; cloudInit: boolean; settings: SystemSettings } {
  return {
    layerDir: tree,
    cloudInit: false,
    settings: { hostname: 'test', diskMiB, swapMiB: 0, kernelParams: [], rootUser: { disablePasswordLogin: false, sshKeys: [] }, users: [], groups: [] },
  };
}

/** Whether process `pid` descends from `ancestor` (its parents read from /proc; false once it has exited). */
export function descendsFrom(pid: number, ancestor: number = process.pid): boolean {
  for (let p = pid, hops = 0; p > 1 && hops < 64; hops++) {
    if (p === ancestor) return true;
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      p = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    } catch {
      return false;
    }
  }
  return false;
}
