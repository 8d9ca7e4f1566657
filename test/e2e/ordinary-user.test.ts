// The README's first command as an ordinary user: `appliance-forge apply examples/local.yml --output
// images` run by a user with no privilege but a subordinate id range (what useradd gives on Debian),
// through the built command line and the embedded server. mmdebstrap, the package scripts and the
// disk stage run as root of that user's namespace: the image's owners are its own ids, the files on
// the host belong to the user. Run as root (CI), which makes the user; the cold OS layer of that user
// is this file's cost (1.5 to 3 minutes on 2 cores). Root then builds the same declaration: the two
// images are the same bytes (sha256sum) and `diff` finds nothing (no id of an image depends on who built it).
import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, cpSync, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT_OFFSET } from '../../src/imaging/disk/gpt';

const USER = 'af-ordinary';
const root = path.resolve(__dirname, '../..');
const cli = path.join(root, 'dist/src/cli/main.js');

function ids(): { uid: number; gid: number; home: string } {
  if (spawnSync('id', ['-u', USER]).status !== 0) execFileSync('useradd', ['--create-home', '--shell', '/bin/sh', USER]);
  const [uid, gid] = ['-u', '-g'].map((f) => Number(execFileSync('id', [f, USER], { encoding: 'utf8' }).trim())) as [number, number];
  // useradd gives a new user a subordinate range; add one where the host's login.defs does not.
  for (const file of ['/etc/subuid', '/etc/subgid']) {
    if (!new RegExp(`^${USER}:`, 'm').test(execFileSync('cat', [file], { encoding: 'utf8' }))) {
      execFileSync('usermod', [file === '/etc/subuid' ? '--add-subuids' : '--add-subgids', '300000-365535', USER]);
    }
  }
  return { uid, gid, home: execFileSync('sh', ['-c', `getent passwd ${USER} | cut -d: -f6`], { encoding: 'utf8' }).trim() };
}

/** Run as the user: its own uid, gid and groups, its HOME (the layer cache goes to ~/.cache). */
function asUser(u: { uid: number; gid: number; home: string }, cwd: string, args: string[]): ReturnType<typeof spawnSync> {
  return spawnSync('setpriv', [`--reuid=${u.uid}`, `--regid=${u.gid}`, '--init-groups', '--', ...args], {
    cwd, encoding: 'utf8', timeout: 1_500_000, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: u.home, LANG: 'C.UTF-8', TMPDIR: cwd, NO_COLOR: '1' },
  });
}

const canRun = process.getuid?.() === 0 && existsSync(cli) && existsSync('/usr/bin/newuidmap');
let work = '';
afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe.runIf(canRun)('the first command as an ordinary user', () => {
  it('builds the example image in the user\'s namespace, with the image\'s own owners', () => {
    const u = ids();
    work = mkdtempSync(path.join(tmpdir(), 'af-ordinary-'));
    cpSync(path.join(root, 'examples'), path.join(work, 'examples'), { recursive: true });
    execFileSync('chown', ['-R', `${u.uid}:${u.gid}`, work]);
    chownSync(work, u.uid, u.gid);
    // The package itself must be readable by the user (a clone in a private home is not): say so rather than fail.
    const readable = asUser(u, work, ['test', '-r', cli]).status === 0;
    if (!readable) {
      console.warn(`skipped: ${cli} is not readable by ${USER} (the clone sits in a folder other users cannot enter)`);
      return;
    }
    const r = asUser(u, work, [process.execPath, cli, 'apply', 'examples/local.yml', '--output', 'images']);
    expect(r.status, `${String(r.stdout)}\n${String(r.stderr)}`).toBe(0);
    const image = path.join(work, 'images/example-web-1.0.qcow2');
    expect(statSync(image).uid).toBe(u.uid); // the user's file, not root's nor a subordinate id's
    const raw = path.join(work, 'image.raw');
    execFileSync('qemu-img', ['convert', '-O', 'raw', image, raw]);
    const stat = (p: string): string => execFileSync('debugfs', ['-R', `stat ${p}`, `${raw}?offset=${ROOT_OFFSET}`], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    expect(stat('/etc/shadow')).toMatch(/User:\s+0\s+Group:\s+42\b/);
    expect(stat('/var/log/nginx')).toMatch(/User:\s+0\s+Group:\s+4\b/);
    expect(stat('/usr/bin/passwd')).toMatch(/Mode:\s+04755/);
    expect(stat('/var/www/example/index.html')).toMatch(/User:\s+0\s+Group:\s+0\b/);
    // The OS layer in the user's cache: its root files are the user's on the host (root of its namespace).
    const layers = path.join(u.home, '.cache/appliance-forge/os/layers');
    const [key] = execFileSync('ls', [layers], { encoding: 'utf8' }).trim().split('\n');
    expect(statSync(path.join(layers, key!, 'tree/etc/passwd')).uid).toBe(u.uid);

    // The same declaration built by root (its own data folder; the suite's cache): the same bytes, as diff says.
    const mine = mkdtempSync(path.join(tmpdir(), 'af-root-'));
    try {
      cpSync(path.join(root, 'examples'), path.join(mine, 'examples'), { recursive: true });
      const byRoot = spawnSync(process.execPath, [cli, 'apply', 'examples/local.yml', '--output', 'images'], { cwd: mine, encoding: 'utf8', timeout: 1_500_000 });
      expect(byRoot.status, `${byRoot.stdout}\n${byRoot.stderr}`).toBe(0);
      const rootImage = path.join(mine, 'images/example-web-1.0.qcow2');
      const diff = spawnSync(process.execPath, [cli, 'diff', rootImage, image], { encoding: 'utf8', timeout: 600_000 });
      expect([diff.status, diff.stdout], diff.stderr).toEqual([0, expect.stringMatching(/^identical \(\d+ files\)\n$/)]);
      expect(execFileSync('sha256sum', [rootImage, image], { encoding: 'utf8' }).split('\n').slice(0, 2).map((l) => l.split(' ')[0])).toEqual(
        Array(2).fill(execFileSync('sha256sum', [image], { encoding: 'utf8' }).split(' ')[0]));
    } finally {
      rmSync(mine, { recursive: true, force: true });
    }
  }, 2_400_000);
});
