// Reproducible builds on a tiny tree, and `appliance-forge diff` on their images (the real CLI):
// the same inputs and seed give byte-identical raw, qcow2 and gzip files; one changed file and one
// changed superblock field are exactly what diff names (the file first, the metadata after it; --files:
// the file alone); the inode times are the epoch's.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildImage, type DiskFormat } from '../../src/imaging';
import { ROOT_OFFSET } from '../../src/imaging/disk/gpt';
import { releaseDateOf } from '../../src/imaging/os/mirror-state';
import { reproducibleRecord } from '../../src/imaging/reproducible';
import { inodeTimesScript, usedInodes } from '../../src/imaging/disk/times';
import type { OsLayerSpec } from '../../src/imaging';
import { runCli } from '../cli/helpers/cli';
import { debugfsStat, e2fsck, fakeOs, fakeTree, tempDir, toRaw } from './tools';

const tmp = tempDir('repro');
afterAll(() => tmp.cleanup());
const TREE = fakeTree(tmp.path);
const EPOCH = 1_700_000_000;
const manifest = JSON.stringify({ name: 'web', version: '1.0' });
const sha = (f: string): string => createHash('sha256').update(readFileSync(f)).digest('hex');

async function build(name: string, disk: DiskFormat, content: string, compress = false): Promise<string> {
  const src = join(tmp.path, `${name}.conf`);
  writeFileSync(src, content);
  const outFile = join(tmp.path, `${name}.${disk}${compress ? '.gz' : ''}`);
  await buildImage({
    ...fakeOs(TREE, 1024), disk, compress, manifest, outFile, workDir: tmp.path,
    files: [{ source: src, destination: '/etc/web/app.conf', rights: '0640' }],
    reproducible: { seed: 'seed-1', sourceDateEpoch: EPOCH },
  });
  return outFile;
}

describe('reproducible builds', () => {
  const built: Record<string, string> = {};
  beforeAll(async () => {
    for (const side of ['a', 'b']) {
      built[`${side}.raw`] = await build(`${side}`, 'raw', 'listen 8080;\n');
      built[`${side}.qcow2`] = await build(`${side}`, 'qcow2', 'listen 8080;\n');
      // A second apart: anything taken from the clock would show.
      await new Promise((r) => setTimeout(r, 1100));
    }
    built['a.gz'] = await build('gz-a', 'qcow2', 'listen 8080;\n', true);
    built['b.gz'] = await build('gz-b', 'qcow2', 'listen 8080;\n', true);
    built['c.raw'] = await build('c', 'raw', 'listen 9090;\n');
  }, 240_000);

  it('gives the same bytes for raw, qcow2 and gzip, and a clean filesystem dated at the epoch', () => {
    expect(sha(built['a.raw']!)).toBe(sha(built['b.raw']!));
    expect(sha(built['a.qcow2']!)).toBe(sha(built['b.qcow2']!));
    expect(sha(built['a.gz']!)).toBe(sha(built['b.gz']!));
    const fsck = e2fsck(built['a.raw']!);
    expect(fsck.status, fsck.out).toBe(0);
    const stat = execFileSync('debugfs', ['-R', 'stat /etc/web/app.conf', `${built['a.raw']!}?offset=${ROOT_OFFSET}`], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    for (const t of ['ctime', 'atime', 'mtime', 'crtime']) expect(stat).toMatch(new RegExp(`${t}: 0x${EPOCH.toString(16)}:00000000`));
    expect(debugfsStat(built['a.raw']!, '/etc/web/app.conf').mode).toBe(0o640);
  });

  it('diff: identical images exit 0; a changed file and a changed superblock field are exactly what it names, files first', async () => {
    const same = await runCli(['diff', built['a.raw']!, built['b.qcow2']!]);
    expect([same.code, same.stdout], same.stderr).toEqual([0, expect.stringMatching(/^identical \(\d+ files\)\n$/)]);

    const c = toRaw(built['c.raw']!, 'raw', join(tmp.path, 'c2.raw'));
    // At the epoch's clock, so the mount count is the one field tune2fs changes (and the checksum with it).
    execFileSync('tune2fs', ['-c', '37', `${c}?offset=${ROOT_OFFSET}`], { stdio: 'ignore', env: { ...process.env, E2FSPROGS_FAKE_TIME: String(EPOCH) } });
    const r = await runCli(['diff', '--json', built['a.raw']!, c]);
    expect(r.code, r.stderr).toBe(1);
    const d = JSON.parse(r.stdout) as { differences: { kind: string; section: string; name: string; a: string; b: string }[]; counts: unknown };
    expect(d.differences.map((x) => `${x.kind}: ${x.section}: ${x.name}`)).toEqual([
      'file: files: /etc/web/app.conf: sha256',
      'metadata: superblock: Maximum mount count',
      'metadata: superblock: Checksum',
    ]);
    expect(d.counts).toEqual({ files: 1, metadata: 2 });
    expect(d.differences[1]).toMatchObject({ a: '-1', b: '37' });
    const text = await runCli(['diff', built['a.raw']!, c]);
    expect(text.stdout).toMatch(/^files \(1 difference\):\n {2}\/etc\/web\/app\.conf: sha256: [0-9a-f]{64} ≠ [0-9a-f]{64}\npartition table and filesystem metadata \(2 differences\):\n {2}superblock: Maximum mount count: -1 ≠ 37\n {2}superblock: Checksum: \S+ ≠ \S+\n$/);
  }, 120_000);

  it('diff --files: only the files; an image whose superblock alone differs has the same files (exit 0)', async () => {
    const c = join(tmp.path, 'c2.raw');
    const files = await runCli(['diff', '--files', built['a.raw']!, c]);
    expect([files.code, files.stderr]).toEqual([1, '']);
    expect(files.stdout).toMatch(/^files \(1 difference\):\n {2}\/etc\/web\/app\.conf: sha256: [0-9a-f]{64} ≠ [0-9a-f]{64}\n$/);
    const json = JSON.parse((await runCli(['diff', '--files', '--json', built['a.raw']!, c])).stdout) as { filesOnly: boolean; differences: { kind: string; name: string }[]; counts: unknown };
    expect(json).toMatchObject({ filesOnly: true, counts: { files: 1, metadata: 0 } });
    expect(json.differences.map((x) => `${x.kind}: ${x.name}`)).toEqual(['file: /etc/web/app.conf: sha256']);
    const sameFiles = await runCli(['diff', '--files', built['c.raw']!, c]);
    expect([sameFiles.code, sameFiles.stdout], sameFiles.stderr).toEqual([0, expect.stringMatching(/^no file differences \(\d+ files\)\n$/)]);
    const all = await runCli(['diff', built['c.raw']!, c]);
    expect([all.code, all.stdout.split('\n')[0]]).toEqual([1, 'partition table and filesystem metadata (2 differences):']);
  }, 120_000);

  // Seen from outside, in /proc: each reader of the images that is caught running (they live milliseconds; the
  // diff is repeated a bounded number of times until one is) has a mount namespace of its own whose root holds
  // no /etc/passwd, /home or /proc. Root only: another user's namespaces may hide /proc/PID/root.
  it.runIf(process.getuid?.() === 0)('diff: sfdisk, dumpe2fs and debugfs run confined, seeing none of the host\'s files', async () => {
    const ours = readlinkSync('/proc/self/ns/mnt');
    const readers = new Set(['sfdisk', 'dumpe2fs', 'debugfs']);
    const seen: Array<{ comm: string; ns: string; host: string[] }> = [];
    // Only this test's own: the diff's processes descend from this one (other files may run builds meanwhile).
    const descends = (pid: string): boolean => {
      let p = pid;
      for (let hops = 0; hops < 12 && p !== '0' && p !== '1'; hops++) {
        const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
        p = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]!;
        if (p === String(process.pid)) return true;
      }
      return false;
    };
    const sample = (): void => {
      for (const pid of readdirSync('/proc')) {
        if (!/^\d+$/.test(pid)) continue;
        try {
          const comm = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
          if (!readers.has(comm) || !descends(pid)) continue;
          const ns = readlinkSync(`/proc/${pid}/ns/mnt`);
          const host = ['etc/passwd', 'home', 'proc'].filter((f) => existsSync(`/proc/${pid}/root/${f}`));
          if (readers.has(readFileSync(`/proc/${pid}/comm`, 'utf8').trim())) seen.push({ comm, ns, host });
        } catch {
          // gone meanwhile
        }
      }
    };
    for (let attempt = 0; attempt < 5 && seen.length === 0; attempt++) {
      const timer = setInterval(sample, 2);
      try {
        const r = await runCli(['diff', built['a.raw']!, built['c.raw']!]);
        expect(r.code, r.stderr).toBe(1);
      } finally {
        clearInterval(timer);
      }
    }
    expect(seen.length).toBeGreaterThan(0);
    for (const s of seen) expect(s, JSON.stringify(s)).toEqual({ comm: s.comm, ns: expect.not.stringMatching(`^${ours.replace(/[[\]]/g, '\\$&')}$`), host: [] });
  }, 300_000);

  it('diff refuses what is no self-contained disk image (usage, exit 2)', async () => {
    const notDisk = join(tmp.path, 'notes.raw');
    writeFileSync(notDisk, 'hello');
    const r = await runCli(['diff', built['a.raw']!, notDisk]);
    expect([r.code, r.stderr]).toEqual([2, expect.stringContaining('boot signature')]);
  });
});

describe('inode times', () => {
  it('lists the root directory and the used inodes from the first non-reserved one', () => {
    expect(usedInodes('Inode count:              16384\nFree inodes:              16370\nFirst inode:              11\n')).toEqual([2, 11, 12, 13, 14]);
    expect(inodeTimesScript([2], 5)).toBe('sif <2> ctime @5\nsif <2> atime @5\nsif <2> crtime @5\n');
  });
});

describe('pinned inputs', () => {
  it('takes the epoch from a clearsigned InRelease and refuses an undated one', () => {
    const head = '-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\nOrigin: Debian\nSuite: stable\nCodename: bookworm\nDate: Sat, 08 Nov 2025 09:23:11 UTC\nValid-Until: x\n';
    expect(releaseDateOf(head)).toBe(Date.UTC(2025, 10, 8, 9, 23, 11) / 1000);
    expect(releaseDateOf('Origin: Debian\n')).toBeUndefined();
  });

  it('says which inputs were pinned: a snapshot mirror only when every source is dated', () => {
    const os = (archive: string, security?: string): OsLayerSpec => ({
      suite: 'bookworm', arch: 'amd64', profile: 'Minimal', kernel: 'cloud', cloudInit: false,
      packages: [{ name: 'nginx', version: '1.22.1-9' }, { name: 'curl' }], mirror: { archive, security },
    });
    const r = { seed: 's', sourceDateEpoch: 1 };
    const snap = 'http://snapshot.debian.org/archive/debian/20261124T000000Z';
    expect(reproducibleRecord(os(snap, 'http://snapshot.debian.org/archive/debian-security/20261124T000000Z'), r)).toMatchObject({
      seed: 's', sourceDateEpoch: 1, mirror: { snapshot: true }, pinnedPackages: ['nginx=1.22.1-9'],
    });
    expect(reproducibleRecord(os(snap, 'http://deb.debian.org/debian-security'), r).mirror.snapshot).toBe(false);
    expect(reproducibleRecord(os('http://deb.debian.org/debian'), r).mirror).toEqual({ archive: 'http://deb.debian.org/debian', security: null, snapshot: false });
  });
});
