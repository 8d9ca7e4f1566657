// Running mmdebstrap (into a directory; unshare mode as root of the build's user namespace, or root
// mode on the host when builds are privileged): in its own process group so a cancel kills it and
// every apt/dpkg/maintainer script under it; apt's errors turned into messages naming the package.
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { resolve } from 'node:path';
import { exitWords, run, runSync, type ChildExit } from '../../host/child';
import { currentBuildHost, type BuildHost } from '../build-host';
import { missingTools, toolsMissingMessage } from '../../host/tools';
import { ImagingError } from '../errors';
import { imagingFault } from '../run';
import type { InstalledPackage } from '../stages';
import { MmdebstrapProgress, type OsLayerProgress } from './progress';
import { buildNote } from '../stage-log';
import { BUILD_ENV } from './recipe';

const MAX_LOG = 64 * 1024;

/** What an OS layer build runs (mmdebstrap verifies the archive with gpgv and Debian's keyring). */
const LAYER_TOOLS = ['mmdebstrap', 'gpgv', '/usr/share/keyrings/debian-archive-keyring.gpg', 'dpkg-query', 'findmnt', 'umount'] as const;

/** No way to run the build (an ordinary user without a user namespace), or a tool missing: an error that says what to do, before anything is written. */
export function checkPrerequisites(host: BuildHost): void {
  const problem = host.problem;
  if (problem !== undefined) throw new ImagingError('prerequisite', problem);
  const missing = missingTools(LAYER_TOOLS);
  if (missing.length > 0) throw new ImagingError('tool', toolsMissingMessage(missing));
}

export interface MmdebstrapRun {
  /** mmdebstrap's temporary files (gpg home, apt's) and HOME: a folder the namespace's root owns. */
  readonly tmpDir: string;
  /** mmdebstrap and the package scripts run as root of this host's user namespace (or the host's, when privileged). */
  readonly host: BuildHost;
  /** Every time the tree gets (dpkg, initramfs-tools, the shadow tools…) is this or older: reproducible trees. */
  readonly sourceDateEpoch: number;
  readonly signal?: AbortSignal | undefined;
  readonly onProgress?: ((p: OsLayerProgress) => void) | undefined;
}

/** Run `mmdebstrap args…`; on failure or abort the target's mounts are undone (the caller removes files). */
export async function runMmdebstrap(args: readonly string[], target: string, o: MmdebstrapRun): Promise<void> {
  let log = '';
  let pending = '';
  const progress = new MmdebstrapProgress((p) => o.onProgress?.(p));
  const t0 = performance.now();
  const onText = (s: string): void => {
    log = (log + s).slice(-MAX_LOG);
    pending += s;
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const l of lines) {
      progress.line(l);
      // Its own steps (`I: running --customize-hook…`) and each initramfs made, with the time since it started.
      if (l.startsWith('I: ') || l.startsWith('update-initramfs: Generating')) buildNote(`mmdebstrap +${((performance.now() - t0) / 1000).toFixed(1)} s ${l.replace(/^I: /, '')}`);
    }
  };
  let ended: ChildExit | undefined;
  try {
    // Its own group: a cancel kills mmdebstrap, apt, dpkg and the maintainer scripts it started.
    ended = await run(
      {
        command: 'mmdebstrap', args, within: o.host.prefix, env: { ...BUILD_ENV, TMPDIR: o.tmpDir, HOME: o.tmpDir, SOURCE_DATE_EPOCH: String(o.sourceDateEpoch) },
        group: true, signal: o.signal, onStdout: onText, onStderr: onText, anyExit: true,
      },
      imagingFault,
    );
  } finally {
    // A killed (or failed) mmdebstrap may leave /proc, /sys, /dev mounted in the tree.
    if (ended?.code !== 0) await unmountUnder(target);
  }
  if (ended.code !== 0) throw explain(log, ended.code, ended.signal);
}

/** apt's own words for a bad request (every package it names), else the end of the log. */
export function explain(log: string, code: number | null, sig: NodeJS.Signals | null): ImagingError {
  const problems = new Set<string>();
  for (const m of log.matchAll(/E: Version '([^']+)' for '([^']+)' was not found/g)) problems.add(`package ${m[2]} version ${m[1]} is not in the mirror`);
  for (const m of log.matchAll(/E: Unable to locate package (\S+)/g)) problems.add(`unknown package ${m[1]} (not in the mirror)`);
  if (problems.size > 0) return new ImagingError('input', [...problems].join('; '));
  const broken = /The following packages have unmet dependencies:[\s\S]*?(?=\nE: )/.exec(log);
  if (broken) return new ImagingError('input', `the packages cannot be installed together: ${broken[0].replace(/\s+/g, ' ').trim()}`);
  const fetch = /E: Failed to fetch (\S+)\s+(.*)/.exec(log) ?? /W: Failed to fetch (\S+)\s+(.*)/.exec(log);
  if (fetch) return new ImagingError('tool', `Debian mirror error: cannot fetch ${fetch[1]}: ${fetch[2]}`);
  if (/No space left on device/.test(log)) return new ImagingError('disk-full', 'no space left on the device while building the OS layer');
  const why = exitWords({ code, signal: sig });
  const tail = log.trim().split('\n').filter((l) => /^(E|W): /.test(l)).slice(-5).join('\n') || log.trim().split('\n').slice(-8).join('\n');
  return new ImagingError('tool', `mmdebstrap failed (${why}): ${tail}`);
}

/** Mount points at or under `dir`, deepest first (as /proc/self/mountinfo lists them, octal escapes decoded). */
export function mountsUnder(dir: string): string[] {
  const root = resolve(dir);
  const points = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[4])
    .filter((p): p is string => p !== undefined)
    .map((p) => p.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8))))
    .filter((p) => p === root || p.startsWith(`${root}/`));
  return [...new Set(points)].sort((a, b) => b.length - a.length);
}

/** Unmount everything under `dir` (lazily if busy), then check: never remove files through a live mount. */
export async function unmountUnder(dir: string): Promise<void> {
  for (let round = 0; round < 5; round++) {
    const points = mountsUnder(dir);
    if (points.length === 0) return;
    for (const p of points) {
      if (runSync({ command: 'umount', args: [p] }).code !== 0) runSync({ command: 'umount', args: ['--lazy', p] });
    }
  }
  const left = mountsUnder(dir);
  if (left.length > 0) throw new ImagingError('tool', `cannot unmount ${left.join(', ')}: the directory ${dir} is left in place`);
}

/**
 * Remove a build directory: its mounts first, so the removal never walks into the host's /proc or
 * /dev. An ordinary user's trees hold folders of the namespace's other ids: removed from inside it.
 */
export async function removeTree(dir: string, host: BuildHost = currentBuildHost()): Promise<void> {
  await unmountUnder(dir);
  if (host.ownNamespace) {
    await host.output('rm', ['-rf', '--one-file-system', '--', dir]);
    return;
  }
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
}

/** What dpkg says is installed in the tree. */
export async function installedPackages(tree: string, host: BuildHost, signal?: AbortSignal): Promise<InstalledPackage[]> {
  const out = await host.output('dpkg-query', [`--admindir=${tree}/var/lib/dpkg`, '-W', '-f=${db:Status-Abbrev}\t${Package}\t${Version}\t${Architecture}\n'], { signal });
  return out
    .split('\n')
    .map((l) => l.split('\t'))
    .filter((f) => f.length === 4 && f[0]!.startsWith('ii'))
    .map(([, name, version, arch]) => ({ name: name!, version: version!, arch: arch! }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
