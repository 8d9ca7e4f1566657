// `url: embedded` in apply mode builds the images on the runner: as root (mmdebstrap's root mode)
// with Debian's image tools. GitHub's hosted runners run a step as a user with passwordless sudo and
// without those tools: the step re-runs itself under sudo, installs what is missing with apt-get,
// and gives the files it wrote back to the runner's user. Where that is impossible, a clear error.
import { spawnSync } from 'node:child_process';
import { lchownSync, lstatSync, readdirSync } from 'node:fs';
import path from 'node:path';
import hostTools from '../../data/host-tools.json';
import { ForgeError } from '../../src/errors';
import { findOnPath, hostToolPresent, sbinPath } from '../../src/host/path';
import { currentSandbox } from '../../src/host/sandbox';

/** Set in the re-run under sudo: never re-run twice. */
const RERUN = 'APPLIANCE_FORGE_ACTION_RERUN';

export class HostError extends ForgeError {
  static readonly code = 'E_HOST';
  constructor(message: string) {
    super(message);
    this.name = 'HostError';
  }
}

/**
 * Not root, without a user namespace or the image tools: runs this same step again under `sudo -n` (inputs and GITHUB_* files are environment
 * variables, kept) and returns its exit code. Root: undefined, go on.
 */
export function rerunAsRoot(log: (line: string) => void): number | undefined {
  if (process.getuid?.() === 0) return undefined;
  // The runner's user builds in its own user namespace when it has one and the tools are there: no root at all.
  const sandbox = currentSandbox();
  if (sandbox.kind === 'userns' && !missingToolPackages().length) {
    log(`building as this runner's user: ${sandbox.reason}`);
    return undefined;
  }
  if (process.env[RERUN]) throw new HostError('sudo did not run the step as root');
  if (spawnSync('sudo', ['-n', 'true'], { stdio: 'ignore' }).status !== 0) {
    throw new HostError(
      "url embedded builds images in the runner user's namespace or as root: this runner's user has no subordinate id range (or lacks the image tools) and cannot use sudo without a password: run the job as root (a container job), on a runner with passwordless sudo (GitHub's hosted runners have it), or install uidmap and the tools and give the user a range (bash scripts/prereqs.sh build)",
    );
  }
  const r = spawnSync('sudo', ['-n', '--preserve-env', process.execPath, ...process.argv.slice(1)], { stdio: 'inherit', env: { ...process.env, [RERUN]: '1' } });
  return r.status ?? 1;
}

/** The Debian packages of the image tools this host lacks (data/host-tools.json, `build`). */
export function missingToolPackages(): string[] {
  return [...new Set(Object.entries(hostTools.build).filter(([tool]) => !hostToolPresent(tool)).map(([, pkg]) => pkg))].sort();
}

/** Installs the missing image tools with apt-get (as root); a clear error where there is no apt-get or it fails. */
export function installImageTools(log: (line: string) => void): void {
  const missing = missingToolPackages();
  if (!missing.length) return;
  if (!findOnPath('apt-get', sbinPath())) {
    throw new HostError(`the image tools are missing (Debian packages: ${missing.join(' ')}) and this runner has no apt-get to install them: use a Debian or Ubuntu runner, or install them before this step`);
  }
  log(`installing the image tools: apt-get install ${missing.join(' ')}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive', PATH: sbinPath() };
  for (const args of [['update', '-qq'], ['install', '-y', '-qq', '--no-install-recommends', ...missing]]) {
    const r = spawnSync('apt-get', args, { env, encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'] });
    if (r.status !== 0) throw new HostError(`apt-get ${args[0]} failed (${r.status ?? r.signal}): ${(r.stderr ?? '').trim().split('\n').slice(-3).join(' ')}`);
  }
}

/** The runner's user under the sudo re-run; undefined otherwise. */
function sudoUser(): { uid: number; gid: number } | undefined {
  const uid = Number(process.env.SUDO_UID);
  const gid = Number(process.env.SUDO_GID);
  return process.env[RERUN] && Number.isInteger(uid) && Number.isInteger(gid) ? { uid, gid } : undefined;
}

/** lchown of `p` and everything under it (links themselves, never followed) that `owned` accepts. */
function chownTree(p: string, uid: number, gid: number, owned: (ownerUid: number) => boolean): void {
  const st = lstatSync(p, { throwIfNoEntry: false });
  if (!st || !owned(st.uid)) return;
  lchownSync(p, uid, gid);
  if (st.isDirectory()) for (const n of readdirSync(p)) chownTree(path.join(p, n), uid, gid, owned);
}

/** Under sudo: the files the step wrote (data folder, output-dir) go back to the runner's user. */
export function giveBack(paths: readonly string[]): void {
  const u = sudoUser();
  if (u) for (const p of paths) chownTree(path.resolve(p), u.uid, u.gid, () => true);
}

/**
 * Under sudo, before the server opens it: the data folder an earlier step gave back to the runner's
 * user is root's again (the server opens only a folder of the user it runs as). Files of any other
 * user are left as they are, and the server refuses them.
 */
export function takeBack(dataDir: string): void {
  const u = sudoUser();
  if (u) chownTree(path.resolve(dataDir), 0, 0, (owner) => owner === u.uid);
}
