// Images made from a cached base disk (src/imaging/disk/base-disk.ts, image-files.ts) on a tiny tree: a
// warm rebuild gives the bytes of a cold build of the same inputs, a changed file changes them, the
// files land as the image sees its paths (its links followed inside it, a link at the destination
// replaced) with their modes, owners and the epoch's times, and the cache stays within its bounds,
// also when two builds of one base run at once.
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildImage } from '../../src/imaging';
import { MAX_ENTRIES } from '../../src/imaging/disk/base-disk';
import { currentSandbox, hostId } from '../../src/host/sandbox';
import { ROOT_OFFSET } from '../../src/imaging/disk/gpt';
import { debugfsCat, debugfsStat, e2fsck, fakeOs, fakeTree, tempDir } from './tools';

const tmp = tempDir('base-disk');
afterAll(() => tmp.cleanup());
const EPOCH = 1_700_000_000;
const sha = (f: string): string => createHash('sha256').update(readFileSync(f)).digest('hex');
let tree = '';
let n = 0;

/** One reproducible raw build; `cache` is the base disk cache's folder. */
async function build(cache: string, content: string, hostname = 'test', passwordHash?: string): Promise<string> {
  const i = n++;
  const src = join(tmp.path, `app-${i}.conf`);
  writeFileSync(src, content);
  const outFile = join(tmp.path, `img-${i}.raw`);
  const os = fakeOs(tree, 1024);
  await buildImage({
    ...os, settings: { ...os.settings, hostname, rootUser: { ...os.settings.rootUser, ...(passwordHash ? { passwordHash } : {}) } }, disk: 'raw', compress: false, manifest: '{"name":"web"}', outFile, workDir: tmp.path,
    files: [
      { source: src, destination: '/etc/web/app.conf', rights: '0640', ownerGroup: 'root:web' },
      { source: src, destination: '/lib/web/tool', rights: '4755' }, // /lib → usr/lib in the image
      { source: src, destination: '/opt/escape/x' }, // a link climbing out: resolved inside the image
      { source: src, destination: '/opt/link' }, // a link out of the tree: replaced, never followed
      { source: src, destination: '/srv/with "quotes" and spaces/<2>' },
    ],
    reproducible: { seed: `seed-${content}`, sourceDateEpoch: EPOCH },
    baseCache: { dir: cache, layerKey: 'fake-layer' },
  });
  return outFile;
}

const HASH = '$6$saltsaltsaltsalt$' + 'h'.repeat(86);
const entries = (cache: string): string[] => readdirSync(join(cache, 'entries'));

describe('images from a cached base disk', () => {
  const built: Record<string, string> = {};
  beforeAll(async () => {
    tree = fakeTree(tmp.path);
    mkdirSync(join(tree, 'usr/lib'), { recursive: true });
    mkdirSync(join(tree, 'opt'));
    symlinkSync('usr/lib', join(tree, 'lib'));
    writeFileSync(join(tree, 'etc/shadow'), 'root:*:19000:0:99999:7:::\n', { mode: 0o640 });
    symlinkSync('../../../../../../../../tmp/outside', join(tree, 'opt', 'escape'));
    symlinkSync('/tmp/outside-target', join(tree, 'opt', 'link'));
    const s = currentSandbox();
    execFileSync('chown', ['-R', '-h', `${hostId(s, 0, 'uid')}:${hostId(s, 0, 'gid')}`, tree]);
    const a = join(tmp.path, 'cache-a');
    built.cold = await build(a, 'listen 8080;\n');
    built.warm = await build(a, 'listen 8080;\n');
    built.otherCold = await build(join(tmp.path, 'cache-b'), 'listen 8080;\n');
    built.changed = await build(a, 'listen 9090;\n');
    built.password = await build(a, 'listen 9090;\n', 'test', HASH);
  }, 240_000);

  it('gives a warm rebuild the bytes of a cold build, and a changed file other bytes', () => {
    expect(entries(join(tmp.path, 'cache-a'))).toHaveLength(1);
    expect(sha(built.warm!)).toBe(sha(built.cold!));
    expect(sha(built.otherCold!)).toBe(sha(built.cold!));
    expect(sha(built.changed!)).not.toBe(sha(built.cold!));
    expect(debugfsCat(built.changed!, '/etc/web/app.conf').toString()).toBe('listen 9090;\n');
    // A password hash (salted anew at each apply) is set on the same base, by the image's shadow tools.
    expect(debugfsCat(built.password!, '/etc/shadow').toString()).toMatch(new RegExp(`^root:${HASH.replaceAll('$', '\\$')}:\\d+:`));
    expect(debugfsStat(built.password!, '/etc/shadow')).toMatchObject({ mode: 0o640, uid: 0, gid: 0 });
  });

  it('writes each file where the image sees it, with its mode, owner and the epoch as every time', () => {
    const raw = built.warm!;
    const fsck = e2fsck(raw);
    expect(fsck.status, fsck.out).toBe(0);
    expect(debugfsStat(raw, '/etc/web/app.conf')).toMatchObject({ type: 'regular', mode: 0o640, uid: 0, gid: 1500 });
    expect(debugfsStat(raw, '/usr/lib/web/tool')).toMatchObject({ type: 'regular', mode: 0o4755, uid: 0, gid: 0 });
    expect(debugfsStat(raw, '/tmp/outside/x').type).toBe('regular');
    expect(debugfsStat(raw, '/opt/link').type).toBe('regular');
    expect(debugfsStat(raw, '/srv/with "quotes" and spaces/<2>').size).toBe(13);
    expect(debugfsStat(raw, '/srv')).toMatchObject({ type: 'directory', mode: 0o755, uid: 0, gid: 0 });
    expect(JSON.parse(debugfsCat(raw, '/etc/appliance-forge/manifest.json').toString())).toEqual({ name: 'web' });
    for (const path of ['/etc/web/app.conf', '/etc/web', '/opt', '/srv/with "quotes" and spaces']) {
      const stat = execFileSync('debugfs', ['-R', `stat "${path.replaceAll('"', '""')}"`, `${raw}?offset=${ROOT_OFFSET}`], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
      for (const t of ['ctime', 'atime', 'mtime', 'crtime']) expect(stat, `${t} of ${path}`).toMatch(new RegExp(`${t}: 0x${EPOCH.toString(16)}:00000000`));
    }
  });

  it('keeps at most its number of bases, and two builds of one base at once agree', async () => {
    const c = join(tmp.path, 'cache-c');
    for (let i = 0; i <= MAX_ENTRIES; i++) await build(c, 'x\n', `host${i}`);
    expect(entries(c).length).toBe(MAX_ENTRIES);
    const d = join(tmp.path, 'cache-d');
    const [x, y] = await Promise.all([build(d, 'same\n'), build(d, 'same\n')]);
    expect(sha(x)).toBe(sha(y));
    expect(entries(d)).toHaveLength(1);
    expect(readdirSync(join(d, 'tmp'))).toEqual([]);
  }, 240_000);
});
