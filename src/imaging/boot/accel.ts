// Which accelerator a boot runs under. KVM only where it is seen to work: /dev/kvm must open read-write
// and a guest must run under it. On one build host kind /dev/kvm opens, the firmware and GRUB run, and the
// Linux kernel then hangs (docs/design/real-images.md), so the probe runs a Linux kernel, not firmware
// alone: the image's own kernel (kernel-files.ts) with no initramfs and no disk, `console=<the platform's> panic=-1`
// and QEMU's `-no-reboot`. Such a kernel runs its whole start-up (decompression, CPU, memory and device
// set-up) to the point where it mounts the root filesystem and starts init, finds no root, panics with
// "VFS: Unable to mount root fs", and the panic's immediate reboot ends QEMU. So a guest runs when QEMU
// exits by itself within the bound having printed that line; a hang is killed at the bound. TCG itself
// gets there in 6-9 s on a loaded 2-core machine, so 20 s is generous for KVM. It runs once a process
// (the answer is the host's), confined as every QEMU of the boot check (host/confine.ts), with /dev/kvm
// the one device added.
import { closeSync, constants, openSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { AbortedError } from '../../errors';
import { exitWords, start } from '../../host/child';
import { DEFAULT_PLATFORM } from '../../model/platforms';
import { confinedPrefix } from '../../host/confine';
import type { Accel, Accelerator } from './accel-choice';
import { BootCheckError } from './errors';
import { accelArgs } from './qemu';

export const KVM_DEVICE = '/dev/kvm';
/** How long the probe's kernel gets to reach its init stage (a working KVM takes a second or two). */
export const KVM_PROBE_BOUND_MS = 20_000;
const PROBE_MEMORY_MIB = 256;
/** The kernel's panic when it has no root to mount: printed once its start-up is done, just before init. */
const REACHED_INIT = 'VFS: Unable to mount root fs';
const NAMES: Record<Accelerator, string> = { kvm: 'KVM', tcg: 'TCG' };

/** Why `device` cannot be opened read-write (undefined: it can). It is closed again at once. */
export function kvmAccessProblem(device = KVM_DEVICE): string | undefined {
  try {
    closeSync(openSync(device, constants.O_RDWR));
    return undefined;
  } catch (e) {
    return accessProblemOf(device, e);
  }
}

/** The one line for an error of opening `device`. */
export function accessProblemOf(device: string, e: unknown): string {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT') return `no ${device} (this host has no KVM: virtualisation is off or not passed to this machine, or the kvm module is not loaded)`;
  if (code === 'EACCES' || code === 'EPERM') return `cannot open ${device} read-write (permission denied: the user must be in group kvm)`;
  return `cannot open ${device} read-write (${code ?? (e instanceof Error ? e.message : String(e))})`;
}

export interface ProbeResult {
  /** The kernel reached its init stage and QEMU exited by itself within the bound. */
  readonly runs: boolean;
  /** When it did not: why, in one line. */
  readonly reason?: string | undefined;
  /** QEMU's pid (gone when this resolves). */
  readonly qemuPid: number;
  readonly elapsedMs: number;
}

/**
 * Runs `kernel` under `accel` (see the top of this file) and says whether it reached its init stage and
 * QEMU exited within `boundMs`; QEMU is killed at the bound or on abort (AbortedError), never left running.
 */
export async function probeAccelerator(o: { readonly accel: Accelerator; readonly kernel: string; readonly boundMs?: number | undefined; readonly signal?: AbortSignal | undefined }): Promise<ProbeResult> {
  if (o.signal?.aborted) throw new AbortedError('boot check aborted');
  const boundMs = o.boundMs ?? KVM_PROBE_BOUND_MS;
  const session = await mkdtemp(path.join(tmpdir(), 'af-accel-'));
  try {
    await mkdir(path.join(session, 'root'));
    await mkdir(path.join(session, 'tmp'));
    const tmp = path.join(session, 'tmp');
    const kernel = path.resolve(o.kernel);
    const within = confinedPrefix({
      root: path.join(session, 'root'),
      paths: [{ path: kernel }, { path: tmp, writable: true }, ...(o.accel === 'kvm' ? [{ path: KVM_DEVICE, device: true }] : [])],
    });
    const args = [
      ...accelArgs(o.accel, 1), '-m', String(PROBE_MEMORY_MIB), '-nodefaults', '-display', 'none', '-serial', 'stdio', '-nic', 'none',
      '-no-reboot', '-kernel', kernel, '-append', `console=${DEFAULT_PLATFORM.console} panic=-1 quiet`,
    ];
    const started = performance.now();
    const child = start({ command: DEFAULT_PLATFORM.qemu.binary, args, within, env: { TMPDIR: tmp }, group: true });
    let tail = '';
    let reached = false;
    child.stdout.on('data', (b: Buffer) => {
      tail = (tail + b.toString('latin1')).slice(-4096);
      reached ||= tail.includes(REACHED_INIT);
    });
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const stopped = new Promise<'bound' | 'abort'>((resolve) => {
      timer = setTimeout(() => resolve('bound'), boundMs);
      onAbort = (): void => resolve('abort');
      o.signal?.addEventListener('abort', onAbort, { once: true });
    });
    const end = await Promise.race([child.exited, stopped]);
    clearTimeout(timer);
    if (onAbort) o.signal?.removeEventListener('abort', onAbort);
    if (typeof end === 'string') await child.kill();
    const exit = await child.exited;
    const elapsedMs = Math.round(performance.now() - started);
    const qemuPid = child.pid ?? -1;
    if (end === 'abort') throw new AbortedError('boot check aborted');
    const name = NAMES[o.accel];
    if (end === 'bound') return { runs: false, reason: `${name} did not run a guest within ${Math.round(boundMs / 1000)} s (the image's kernel, started without a disk, did not reach its init stage)`, qemuPid, elapsedMs };
    if (!reached) {
      const said = (exit.stderr || exit.error?.message || '').split('\n').find((l: string) => l.trim() !== '');
      return { runs: false, reason: `${name} did not run a guest: QEMU exited (${exitWords(exit)}) before the kernel reached its init stage${said ? `: ${said.trim()}` : ''}`, qemuPid, elapsedMs };
    }
    return { runs: true, qemuPid, elapsedMs };
  } finally {
    await rm(session, { recursive: true, force: true });
  }
}

/** The accelerator a boot runs under; `reason` says why it is TCG when `auto` asked. */
export interface AccelChoice {
  readonly requested: Accel;
  readonly used: Accelerator;
  readonly reason?: string | undefined;
}

/** A kernel for the probe; `dispose` removes it when it was copied out for the probe alone. */
export interface ProbeKernel {
  readonly kernel: string;
  dispose(): Promise<void>;
}

/** The image has no kernel the probe can read (the image's fault, not the host's): why. */
export interface NoProbeKernel {
  readonly unavailable: string;
}

let probed: Promise<ProbeResult> | undefined;

/** Why KVM cannot run a guest here (undefined: it can); the probe runs at most once a process. */
async function kvmProblem(kernel: () => Promise<ProbeKernel | NoProbeKernel>, signal?: AbortSignal): Promise<string | undefined> {
  const access = kvmAccessProblem();
  if (access !== undefined) return access;
  let p = probed;
  if (!p) {
    const k = await kernel();
    // Not remembered: the next image may have a kernel to probe with.
    if ('unavailable' in k) return `KVM was not probed: the probe needs the image's kernel, and ${k.unavailable}`;
    if (probed) {
      // Another boot of this process started the probe meanwhile: its answer is this one's.
      p = probed;
      await k.dispose();
    } else {
      const mine = probeAccelerator({ accel: 'kvm', kernel: k.kernel, signal }).finally(() => k.dispose());
      probed = p = mine;
      // An aborted probe answered nothing: the next boot probes again.
      mine.catch(() => {
        if (probed === mine) probed = undefined;
      });
    }
  }
  const r = await p;
  return r.runs ? undefined : r.reason;
}

/**
 * `requested` resolved: TCG as asked (/dev/kvm untouched), KVM when it works, TCG with the reason when
 * `auto` finds it does not, a BootCheckError of kind 'kvm' when `kvm` was asked and it does not.
 */
export async function chooseAccel(requested: Accel, kernel: () => Promise<ProbeKernel | NoProbeKernel>, signal?: AbortSignal): Promise<AccelChoice> {
  if (requested === 'tcg') return { requested, used: 'tcg' };
  const problem = await kvmProblem(kernel, signal);
  if (problem === undefined) return { requested, used: 'kvm' };
  if (requested === 'kvm') throw new BootCheckError('kvm', `KVM cannot be used: ${problem}`);
  return { requested, used: 'tcg', reason: problem };
}
