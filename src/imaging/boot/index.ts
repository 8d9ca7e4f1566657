// Boot an image under QEMU (KVM where it works, else TCG: accel.ts) and report whether it reached a
// login prompt; optionally log in over the serial console and run commands. The image is never modified (snapshot=on), and no QEMU
// outlives the call: timeout, abort and errors all kill its process group.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { ConfinedPath } from '../../host/confine';
import { AbortedError } from '../../errors';
import { DEFAULT_PLATFORM } from '../../model/platforms';
import { maskSecrets, MIN_SECRET_LENGTH } from '../../model/redact';
import { hasControl } from '../../model/text-rules';
import { chooseAccel, KVM_DEVICE, type AccelChoice } from './accel';
import { DEFAULT_ACCEL, isAccel, ACCELS, type Accel } from './accel-choice';
import { SerialConsole } from './console';
import { BootCheckError, isBootCheckError } from './errors';
import { FIRMWARE_FILES, FIRMWARES, isFirmware, prepareFirmware, type Firmware } from './firmware';
import { requireBootTools } from './host-tools';
import { inspectImage, isImageFormat, IMAGE_FORMATS, type ImageFormat } from './image';
import { freeLoopbackPort, probeHttp, type ProbeState } from './http-probe';
import { directCommandLine } from './fast-params';
import { extractBootFiles, type BootFiles } from './kernel-files';
import { startQemu } from './qemu';
import { MAX_COMMAND_BYTES, runSession, type CommandResult, type SessionState } from './session';

export { BootCheckError, isBootCheckError, type BootCheckErrorKind } from './errors';
export { IMAGE_FORMATS, type ImageFormat } from './image';
export { FIRMWARES, type Firmware } from './firmware';
export { ACCEL_CHOICES, ACCELS, DEFAULT_ACCEL, isAccel, type Accel, type Accelerator } from './accel-choice';
export { KVM_PROBE_BOUND_MS, type AccelChoice } from './accel';
export { FAST_KERNEL_PARAMS, FAST_NETWORK_PARAMS } from './fast-params';
export { MAX_COMMAND_BYTES, MAX_OUTPUT_BYTES, type CommandResult } from './session';

/** Generous: a boot under TCG reaches login in ~35 s on an idle machine, several times that under load. */
export const DEFAULT_BOOT_TIMEOUT_MS = 300_000;
export const DEFAULT_MEMORY_MIB = 1024;
/**
 * One vCPU unless asked: two take about two thirds of the time on an idle 2-core host, but where other
 * work shares the cores (two test files each booting, CI), the guest's vCPU threads preempt each other
 * and a boot can stall past its timeout (docs/cli-guide.md "Boot an image").
 */
export const DEFAULT_CPUS = 1;

export interface BootCheckOptions {
  /** Path of the disk image: a self-contained image, its format named by its extension (image.ts). */
  readonly image: string;
  /** Its format, in place of the extension; still checked against the file's magic. */
  readonly format?: ImageFormat | undefined;
  /** For the whole check: boot, login and commands. Default DEFAULT_BOOT_TIMEOUT_MS. */
  readonly timeoutMs?: number | undefined;
  readonly memoryMiB?: number | undefined;
  /** Log in over the serial console once `login:` shows. */
  readonly login?: { readonly user: string; readonly password: string } | undefined;
  /** Run after the login, each by `sh -c`, stdin /dev/null; needs `login`. */
  readonly commands?: readonly string[];
  /** 'user': a user-mode NIC with DHCP (no forwarding from the host); default 'none'. */
  readonly network?: 'none' | 'user';
  /** 'bios' (SeaBIOS, the default), 'uefi' (OVMF, q35) or 'uefi-secure' (OVMF with Secure Boot on and Microsoft's keys). */
  readonly firmware?: Firmware | undefined;
  /** Aborting kills QEMU and rejects with AbortedError. */
  readonly signal?: AbortSignal;
  /** Each console line as it comes, ANSI escapes removed, the password masked. */
  readonly onLine?: ((line: string) => void) | undefined;
  /**
   * The fast path for functional checks: the image's own kernel and initramfs started by QEMU
   * (kernel-files.ts), no firmware boot or boot loader. Default false: the whole boot, as a machine does it.
   */
  readonly directKernel?: boolean | undefined;
  /** With directKernel: add FAST_KERNEL_PARAMS (and, with a NIC, FAST_NETWORK_PARAMS) to the image's command line (fast-params.ts). Default true. */
  readonly fastParams?: boolean | undefined;
  /** Virtual CPUs (TCG multi-threaded above 1); default DEFAULT_CPUS. */
  readonly cpus?: number | undefined;
  /**
   * Readiness by probing: the guest's TCP `port` forwarded to a free port on 127.0.0.1, asked for `path`
   * until it answers 200 (implies network 'user'). Without a login, the check ends there, no prompt awaited.
   */
  readonly http?: { readonly port: number; readonly path?: string | undefined } | undefined;
  /**
   * 'auto' (the default): KVM when /dev/kvm opens and a bounded probe runs the image's kernel under it
   * (accel.ts), else TCG; 'kvm': KVM or a BootCheckError of kind 'kvm'; 'tcg': TCG, /dev/kvm untouched.
   */
  readonly accel?: Accel | undefined;
  /** The accelerator once chosen, before QEMU starts (with the reason when 'auto' fell back to TCG). */
  readonly onAccel?: ((choice: AccelChoice) => void) | undefined;
}

export interface BootCheckResult {
  readonly image: string;
  readonly format: ImageFormat;
  readonly firmware: Firmware;
  /** `login:` showed on the serial console. */
  readonly reachedLogin: boolean;
  /** Present when a login was asked for: the shell answered. */
  readonly loggedIn?: boolean | undefined;
  /** Present once logged in: one per command that finished, in order. */
  readonly results?: readonly CommandResult[] | undefined;
  /** Why the check stopped short of what was asked (timeout, login refused, QEMU exited). */
  readonly reason?: string | undefined;
  /** The last 8 KiB of the console (ANSI removed, password masked). */
  readonly consoleTail: string;
  readonly elapsedMs: number;
  /** QEMU's pid (already killed): lets a caller check that nothing is left running. */
  readonly qemuPid: number;
  /** How it booted: through the firmware and boot loader, or the direct-kernel path. */
  readonly path: 'firmware' | 'direct-kernel';
  /** The direct-kernel path's kernel command line, as QEMU passed it (the image's own plus any fast-path words). */
  readonly commandLine?: string | undefined;
  /** Present when a probe was asked: the last status answered, and when 200 first came (ms from QEMU's start). */
  readonly http?: { readonly status?: number | undefined; readonly readyMs?: number | undefined } | undefined;
  /** ms from QEMU's start to the login prompt, when it showed. */
  readonly loginPromptMs?: number | undefined;
  /** What was asked, what QEMU ran under, and why TCG when 'auto' found KVM unusable. */
  readonly accel: AccelChoice;
}

/** The check passed: login reached, the login (if asked) worked, every command (if any) ran and exited 0. */
export function bootCheckPassed(r: BootCheckResult, asked: { login?: unknown; commands?: readonly string[]; http?: unknown }): boolean {
  if (r.reason !== undefined) return false;
  if (asked.http && r.http?.status !== 200) return false;
  if ((asked.login || !asked.http) && !r.reachedLogin) return false;
  if (asked.login && r.loggedIn !== true) return false;
  const n = asked.commands?.length ?? 0;
  return (r.results?.length ?? 0) === n && (r.results ?? []).every((c) => c.exitCode === 0);
}

/** A stop of the session that is a result, not an error (its message becomes `reason`). */
class SessionStop extends Error {}

function checkOptions(o: BootCheckOptions): void {
  const bad = (m: string): never => {
    throw new BootCheckError('input', m);
  };
  if (o.format !== undefined && !isImageFormat(o.format)) bad(`format must be one of ${IMAGE_FORMATS.join(', ')}`);
  if (o.timeoutMs !== undefined && !(Number.isFinite(o.timeoutMs) && o.timeoutMs > 0)) bad('timeoutMs must be a positive number');
  if (o.memoryMiB !== undefined && !(Number.isInteger(o.memoryMiB) && o.memoryMiB >= 128 && o.memoryMiB <= 65536)) bad('memoryMiB must be an integer from 128 to 65536');
  if (o.network !== undefined && o.network !== 'none' && o.network !== 'user') bad(`network must be 'none' or 'user'`);
  if (o.cpus !== undefined && !(Number.isInteger(o.cpus) && o.cpus >= 1 && o.cpus <= 16)) bad('cpus must be an integer from 1 to 16');
  if (o.http) {
    if (!(Number.isInteger(o.http.port) && o.http.port >= 1 && o.http.port <= 65535)) bad('the probed port must be from 1 to 65535');
    if (o.http.path !== undefined && !/^\/[\x21-\x7e]{0,1023}$/.test(o.http.path)) bad('the probed path must start with / and hold printable ASCII only');
    if (o.network === 'none') bad(`an HTTP probe needs network 'user'`);
  }
  if (o.firmware !== undefined && !isFirmware(o.firmware)) bad(`firmware must be one of ${FIRMWARES.join(', ')}`);
  if (o.accel !== undefined && !isAccel(o.accel)) bad(`accel must be one of ${ACCELS.join(', ')}`);
  if (o.login) {
    if (!/^[A-Za-z0-9_][A-Za-z0-9_.-]*$/.test(o.login.user) || o.login.user.length > 32) bad('the login user must be a plain user name');
    // Shorter passwords would not be masked in the console (one masker, one minimum: src/model/redact.ts).
    if (o.login.password.length < MIN_SECRET_LENGTH || hasControl(o.login.password)) {
      bad(`the password must have at least ${MIN_SECRET_LENGTH} characters and hold no control characters`);
    }
  }
  const commands = o.commands ?? [];
  if (commands.length > 0 && !o.login) bad('commands need a login');
  for (const c of commands) {
    if (c.trim() === '' || c.includes('\0') || Buffer.byteLength(c) > MAX_COMMAND_BYTES) bad(`each command must be non-empty, without NUL, at most ${MAX_COMMAND_BYTES} bytes`);
  }
}

export async function bootCheck(o: BootCheckOptions): Promise<BootCheckResult> {
  const started = performance.now();
  checkOptions(o);
  if (o.signal?.aborted) throw new AbortedError('boot check aborted');
  const firmware = o.firmware ?? 'bios';
  requireBootTools([DEFAULT_PLATFORM.qemu.binary, 'qemu-img', ...FIRMWARE_FILES[firmware], ...(o.directKernel ? (['sfdisk', 'debugfs'] as const) : [])]);
  const image = await inspectImage(o.image, o.format, o.signal);
  const format = image.format;
  const timeoutMs = o.timeoutMs ?? DEFAULT_BOOT_TIMEOUT_MS;
  const password = o.login?.password;
  const mask = (s: string): string => maskSecrets(s, password ? [password] : []);
  const stop = new AbortController();
  // An exception in the caller's onLine ends the check with that exception (after QEMU is killed).
  const onLine = o.onLine && ((line: string): void => {
    try {
      o.onLine!(line);
    } catch (e) {
      stop.abort(e);
    }
  });
  const con = new SerialConsole(mask, onLine);
  const state: SessionState = { reachedLogin: false };

  // QEMU's own folder: the mount point of its confinement's root, and $TMPDIR for snapshot=on's overlay.
  const session = await mkdtemp(path.join(tmpdir(), 'af-qemu-'));
  const disposeSession = (): Promise<void> => rm(session, { recursive: true, force: true });
  let files: BootFiles | undefined;
  let fw: Awaited<ReturnType<typeof prepareFirmware>> | undefined;
  let accel: AccelChoice;
  try {
    await mkdir(path.join(session, 'root'));
    await mkdir(path.join(session, 'tmp'));
    // The accelerator first (--accel kvm on a host without KVM fails before any copy is made). The probe's
    // kernel: the direct-kernel path's copy, made here and kept for the boot; else a copy for the probe alone,
    // whose failure (an image without a kernel debugfs can read) leaves the firmware boot under TCG.
    accel = await chooseAccel(o.accel ?? DEFAULT_ACCEL, async () => {
      if (o.directKernel) {
        const own = (files = await extractBootFiles(image, o.signal));
        return { kernel: own.kernel, dispose: async () => undefined };
      }
      try {
        const copy = await extractBootFiles(image, o.signal);
        return { kernel: copy.kernel, dispose: copy.dispose };
      } catch (e) {
        if (isBootCheckError(e) && e.kind !== 'confinement') return { unavailable: e.message };
        throw e;
      }
    }, o.signal);
    if (o.directKernel) files ??= await extractBootFiles(image, o.signal);
    fw = await prepareFirmware(firmware);
    // Said once the image's files are out and QEMU is next: a refused image's one line stays its only one.
    o.onAccel?.(accel);
  } catch (e) {
    await files?.dispose();
    await disposeSession();
    throw e;
  }
  const network = o.http ? 'user' : (o.network ?? 'none');
  const kernel = files && { kernel: files.kernel, initrd: files.initrd, append: directCommandLine(files.append, o.fastParams ?? true, network === 'user') };
  const hostPort = o.http ? await freeLoopbackPort() : undefined;
  const probe: ProbeState = {};
  const fwSetup = fw.setup;
  const paths: ConfinedPath[] = [
    { path: image.path },
    { path: path.join(session, 'tmp'), writable: true },
    ...(fwSetup.kind === 'uefi' ? [{ path: path.dirname(fwSetup.vars), writable: true }] : []),
    ...(files ? [{ path: files.dir }] : []),
    ...(accel.used === 'kvm' ? [{ path: KVM_DEVICE, device: true }] : []),
  ];
  const qemuStarted = performance.now();
  const qemu = await fw.using(() => startQemu({
    image: image.path, format, memoryMiB: o.memoryMiB ?? DEFAULT_MEMORY_MIB, network,
    forwards: o.http && hostPort !== undefined ? [{ hostPort, guestPort: o.http.port }] : [],
    kernel, cpus: o.cpus ?? DEFAULT_CPUS, firmware: fwSetup, accel: accel.used,
  }, { root: path.join(session, 'root'), paths, tmp: path.join(session, 'tmp') }, (b) => con.feed(b))).catch(async (e: unknown) => {
    await files?.dispose();
    await disposeSession();
    throw e;
  });
  const phase = (): string => (!state.reachedLogin ? 'login prompt' : state.loggedIn !== true ? 'login' : 'commands');
  const timer = setTimeout(() => stop.abort(new SessionStop(`timed out after ${Math.round(timeoutMs / 1000)} s waiting for the ${phase()}`)), timeoutMs);
  const onAbort = (): void => stop.abort(new AbortedError('boot check aborted'));
  o.signal?.addEventListener('abort', onAbort, { once: true });
  let early: BootCheckError | undefined;
  let stopping = false;
  void qemu.exited.then((x) => {
    if (stopping) return;
    const how = x.signal ? `signal ${x.signal}` : `code ${x.code}`;
    // QEMU refusing to start (bad image, no memory) is an error; the guest powering off is a result.
    if (x.code !== 0 && !state.reachedLogin && con.consoleTail() === '') early = new BootCheckError('qemu', `${DEFAULT_PLATFORM.qemu.binary} exited (${how}): ${x.stderr || 'no message'}`);
    const e = new SessionStop(`qemu exited (${how}) while waiting for the ${phase()}${x.stderr ? `: ${x.stderr}` : ''}`);
    con.close(e);
    stop.abort(e);
  });
  let loginPromptMs: number | undefined;
  const waitLogin = o.login !== undefined || !o.http;
  try {
    await Promise.all([
      waitLogin
        ? runSession({ console: con, write: qemu.write }, { login: o.login, commands: o.commands ?? [] }, state, stop.signal, () => {
          loginPromptMs = Math.round(performance.now() - qemuStarted);
        })
        : undefined,
      o.http && hostPort !== undefined ? probeHttp(hostPort, o.http.path ?? '/', qemuStarted, probe, stop.signal) : undefined,
    ]);
  } catch (e) {
    if (!(e instanceof SessionStop)) throw e;
    state.reason ??= e.message;
  } finally {
    clearTimeout(timer);
    o.signal?.removeEventListener('abort', onAbort);
    // -snapshot: nothing of the guest is worth a clean shutdown, so QEMU is killed, not powered off.
    stopping = true;
    con.close(new SessionStop('qemu stopped'));
    await qemu.kill();
    await fw.dispose();
    await files?.dispose();
    await disposeSession();
  }
  if (early) throw early;
  return {
    image: o.image,
    format,
    firmware,
    reachedLogin: state.reachedLogin,
    loggedIn: state.loggedIn,
    results: state.results,
    reason: state.reason,
    consoleTail: con.consoleTail(),
    elapsedMs: Math.round(performance.now() - started),
    qemuPid: qemu.pid,
    path: files ? 'direct-kernel' : 'firmware',
    commandLine: kernel?.append,
    ...(o.http ? { http: { status: probe.status, readyMs: probe.readyMs } } : {}),
    loginPromptMs,
    accel,
  };
}
