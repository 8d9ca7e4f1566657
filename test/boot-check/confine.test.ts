// The confinement of the programs that read an untrusted image (src/host/confine.ts), judged from
// inside by a shell and coreutils run confined: what they can open, write, and do. As root, and as an
// ordinary user (runuser) where the machine has one. Seconds.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { confinedPrefix, confinementProblem, type ConfineSpec } from '../../src/host/confine';

const work = mkdtempSync(path.join(tmpdir(), 'af-confine-'));
chmodSync(work, 0o755);
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Runs `sh -c script` confined by `spec` (as `user` through runuser when given); its exit, stdout and stderr. */
function confined(spec: ConfineSpec, script: string, user?: string): { code: number | null; out: string; err: string } {
  const prefix = confinedPrefix(spec, user === undefined);
  const argv = [...(user === undefined ? [] : ['runuser', '-u', user, '--']), ...prefix, '/bin/sh', '-c', script];
  const r = spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8', env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', LC_ALL: 'C' } });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

/** A folder with an image, a host file next to it (the canary), a writable folder and a mount point. */
function layout(name: string, owner?: number): { image: string; canary: string; rw: string; root: string } {
  const dir = path.join(work, name);
  mkdirSync(dir);
  const image = path.join(dir, 'disk.qcow2');
  execFileSync('qemu-img', ['create', '-q', '-f', 'qcow2', image, '8M']);
  const canary = path.join(dir, 'canary.txt');
  writeFileSync(canary, 'a host file\n');
  const rw = path.join(dir, 'rw');
  const root = path.join(dir, 'root');
  mkdirSync(rw);
  mkdirSync(root);
  if (owner !== undefined) for (const p of [dir, image, canary, rw, root]) chownSync(p, owner, owner);
  chmodSync(image, 0o600);
  return { image, canary, rw, root };
}

/** What a confined shell finds: each probe prints `name=yes` or `name=no`. */
const PROBES = `
t() { if eval "$2" >/dev/null 2>&1; then echo "$1=yes"; else echo "$1=no"; fi; }
t read-image 'head -c 4 "$IMAGE" | grep -q QFI'
t write-image 'echo x >> "$IMAGE"'
t read-canary 'cat "$CANARY"'
t list-image-folder 'ls "$(dirname "$IMAGE")" | grep -q canary'
t write-rw 'echo x > "$RW/out" && cat "$RW/out"'
t write-root 'echo x > /x'
t etc-passwd 'cat /etc/passwd'
t proc 'ls /proc/1'
t sys 'ls /sys/kernel'
t home 'ls /home /root'
t var 'ls /var'
t qemu-img 'qemu-img --version'
t mount 'mount -t tmpfs x "$RW"'
t chroot 'chroot / true'
t unshare 'unshare --mount true'
t dev-null 'echo x > /dev/null'
t dev-urandom 'head -c 4 /dev/urandom'
t cwd '[ "$(pwd)" = "$RW" ]'
`;

function probe(l: { image: string; canary: string; rw: string; root: string }, user?: string): Record<string, string> {
  const script = `IMAGE='${l.image}' CANARY='${l.canary}' RW='${l.rw}'\n${PROBES}`;
  const r = confined({ root: l.root, paths: [{ path: l.image }, { path: l.rw, writable: true }], cwd: l.rw }, script, user);
  expect(r.code, r.err).toBe(0);
  return Object.fromEntries(r.out.trim().split('\n').map((line) => line.split('=') as [string, string]));
}

const EXPECTED = {
  'read-image': 'yes', 'write-image': 'no', 'read-canary': 'no', 'list-image-folder': 'no', 'write-rw': 'yes', 'write-root': 'no',
  'etc-passwd': 'no', proc: 'no', sys: 'no', home: 'no', var: 'no', 'qemu-img': 'yes', mount: 'no', chroot: 'no', unshare: 'no',
  'dev-null': 'yes', 'dev-urandom': 'yes', cwd: 'yes',
};

/** An ordinary user of this machine that can make a user namespace (the test's second case), if any. */
function ordinaryUser(): { name: string; uid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  for (const line of readFileSync('/etc/passwd', 'utf8').split('\n')) {
    const [name, , uid] = line.split(':');
    if (name === 'af-ordinary' && uid !== undefined) {
      const ok = spawnSync('runuser', ['-u', name, '--', 'unshare', '--user', '--map-root-user', '--mount', 'true']).status === 0;
      return ok ? { name, uid: Number(uid) } : undefined;
    }
  }
  return undefined;
}

describe('a confined program sees the image (read only) and its own folders, nothing else of the host', () => {
  it('this machine can confine (the probe)', () => {
    expect(confinementProblem()).toBeUndefined();
  });

  it('as root: no host file, no /proc, no capabilities (mount, chroot, unshare refused); the image cannot be written', () => {
    const l = layout('root');
    expect(probe(l)).toEqual(EXPECTED);
    expect(readFileSync(l.rw + '/out', 'utf8')).toBe('x\n');
    // Nothing was mounted on the host: the mount point is still an empty folder.
    expect(execFileSync('ls', ['-A', l.root], { encoding: 'utf8' })).toBe('');
  });

  it('as an ordinary user (a user namespace of its own uid): the same', (ctx) => {
    const user = ordinaryUser();
    if (!user) {
      ctx.skip();
      return;
    }
    const l = layout('user', user.uid);
    expect(probe(l, user.name)).toEqual(EXPECTED);
  });

  it('paths are given as arguments, never as script text; a relative path is refused', () => {
    const l = layout('quoting');
    const odd = path.join(work, 'quoting', "it's $(touch pwned) `x`.qcow2");
    execFileSync('cp', [l.image, odd]);
    const r = confined({ root: l.root, paths: [{ path: odd }] }, `head -c 3 '${odd.replace(/'/g, `'\\''`)}'`);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toBe('QFI');
    for (const dir of [path.join(work, 'quoting'), process.cwd(), '/']) expect(existsSync(path.join(dir, 'pwned'))).toBe(false);
    expect(() => confinedPrefix({ root: l.root, paths: [{ path: 'disk.qcow2' }] })).toThrow(/must be absolute/);
  });
});
