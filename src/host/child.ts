// The one way the package runs a host program: no shell; LC_ALL=C and the sbin folders on PATH; killed
// when this process dies; optionally through a prefix (root of the build's user namespace, sandbox.ts);
// cancelled by an AbortSignal; what it prints kept within bounds. `run` waits for the exit, `start`
// hands over a long-lived process (QEMU on its serial console), `runSync` serves the few probes made
// before anything is asynchronous.
//
// Death signal: without it, a SIGKILLed server leaves `cp`, `mke2fs` or `mmdebstrap` writing into its
// work area, and the next start finds a directory that keeps filling up. `setpriv --pdeathsig KILL`
// (util-linux, Priority required on Debian) execs the program with the parent-death signal set, so the
// pid, the process group and the exit status stay those of the program itself.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { AbortedError } from '../errors';
import { findOnPath, sbinPath } from './path';
import { toolsMissingMessage } from './tools';

/** The last bytes of a program's stderr: enough for its message, bounded whatever it prints. */
export const MAX_STDERR = 16 * 1024;
/** Collected stdout (`collect`): for reports such as filefrag's or gpgv's output, never a stream. */
export const MAX_STDOUT = 64 * 1024 * 1024;

export interface ChildSpec {
  /** A program on PATH (the sbin folders included), or an absolute path. */
  readonly command: string;
  readonly args: readonly string[];
  /** Run through this command prefix (`sandboxPrefix()`: as root of the build's user namespace). */
  readonly within?: readonly string[] | undefined;
  readonly cwd?: string | undefined;
  /** Set on top of this process's environment (after LC_ALL=C and PATH). */
  readonly env?: Readonly<Record<string, string>> | undefined;
  /** Its own process group, killed as a whole (mmdebstrap with apt and dpkg under it, QEMU). */
  readonly group?: boolean | undefined;
  /** Each chunk of stderr as it comes (besides the bounded tail every exit carries). */
  readonly onStderr?: ((text: string) => void) | undefined;
}

export interface ChildExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** The last MAX_STDERR bytes of stderr, trimmed. */
  readonly stderr: string;
}

/** Why a run did not succeed, its message already written: the caller picks its own error class. */
export type ChildFault =
  | { readonly kind: 'missing'; readonly message: string; readonly cause?: Error | undefined }
  | { readonly kind: 'start' | 'exit' | 'output'; readonly message: string; readonly cause?: Error | undefined; readonly exit?: ChildExit | undefined };

export interface RunSpec extends ChildSpec {
  readonly signal?: AbortSignal | undefined;
  /** Written to stdin, then closed (e.g. `name:hash` lines for chpasswd: never on a command line). */
  readonly input?: string | undefined;
  /** Each chunk of stdout as it comes (progress lines). */
  readonly onStdout?: ((text: string) => void) | undefined;
  /** Keep stdout (at most MAX_STDOUT) and return it. */
  readonly collect?: boolean | undefined;
  /** On abort, SIGTERM first and SIGKILL only after this long (a child that cleans up after itself). */
  readonly graceMs?: number | undefined;
  /** A non-zero exit that is still an answer (gpgv's bad signature): returned, not a fault. */
  readonly anyExit?: boolean | undefined;
}

export interface RunResult extends ChildExit {
  /** stdout, when collected. */
  readonly stdout: string;
}

export interface Child {
  readonly pid: number | undefined;
  readonly stdout: Readable;
  /** Bytes for its stdin (started with `interactive`); ignored once it is gone. */
  write(text: string | Buffer): void;
  /** The last bytes for its stdin, which is then closed. */
  end(text?: string): void;
  /** Settles once it has exited and its pipes are closed; never rejects (a spawn error is `error`). */
  readonly exited: Promise<ChildExit & { readonly error?: NodeJS.ErrnoException | undefined }>;
  /** SIGKILL (the whole group when it has one, stragglers included); resolves once it has exited. */
  kill(): Promise<ChildExit>;
  /** SIGTERM to it alone (its group's members are its business). */
  terminate(): void;
}

let setpriv: string | null | undefined;

/** The command line that runs `command args` so that it is killed when this process dies (unchanged where setpriv is missing). */
export function diesWithParent(command: string, args: readonly string[]): [string, string[]] {
  if (setpriv === undefined) setpriv = findOnPath('setpriv', sbinPath()) ?? null;
  return setpriv === null ? [command, [...args]] : [setpriv, ['--pdeathsig', 'KILL', '--', command, ...args]];
}

/** The whole command line: the prefix outside, the death signal inside (changing to a namespace's root would clear it). */
function commandLine(s: ChildSpec): [string, string[]] {
  const [cmd, argv] = diesWithParent(s.command, s.args);
  const [first, ...rest] = [...(s.within ?? []), cmd, ...argv];
  return [first!, rest];
}

function environment(s: ChildSpec): NodeJS.ProcessEnv {
  return { ...process.env, LC_ALL: 'C', PATH: sbinPath(), ...s.env };
}

/** `exit status 2` or `signal SIGKILL`. */
export function exitWords(e: Pick<ChildExit, 'code' | 'signal'>): string {
  return e.code !== null ? `exit status ${e.code}` : `signal ${e.signal ?? 'unknown'}`;
}

/** A program missing on this host: the fault every caller reports, in the one vocabulary of tools.ts. */
function missing(command: string, cause?: Error): ChildFault {
  return { kind: 'missing', message: toolsMissingMessage([command]), cause };
}

/** Not on PATH (nor, for an absolute path, executable). */
function absent(command: string): boolean {
  return findOnPath(command, sbinPath()) === undefined;
}

// A process group still running when Node exits (an uncaught exception, process.exit) is killed.
const groups = new Set<ChildProcess>();
let exitHook = false;

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    child.kill('SIGKILL'); // already gone, or no group of its own
  }
}

/**
 * A long-lived program: stdout as a stream, stdin open when `interactive`. The caller reads, writes,
 * and kills; `exited` tells the end. The program must exist (check with `missingTools` first).
 */
export function start(s: ChildSpec & { readonly interactive?: boolean | undefined }): Child {
  const [cmd, argv] = commandLine(s);
  const child = spawn(cmd, argv, { stdio: [s.interactive ? 'pipe' : 'ignore', 'pipe', 'pipe'], cwd: s.cwd, env: environment(s), detached: s.group === true });
  if (s.group) {
    groups.add(child);
    if (!exitHook) {
      exitHook = true;
      process.on('exit', () => groups.forEach(killGroup));
    }
  }
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (t: string) => {
    stderr = (stderr + t).slice(-MAX_STDERR);
    s.onStderr?.(t);
  });
  // A write after the program is gone is not worth crashing for: its exit says what happened.
  child.stdin?.on('error', () => undefined);
  const exited = new Promise<ChildExit & { error?: NodeJS.ErrnoException | undefined }>((resolve) => {
    let error: NodeJS.ErrnoException | undefined;
    child.on('error', (e: NodeJS.ErrnoException) => {
      error = e;
      // No process was made: no 'close' follows.
      if (child.pid === undefined) resolve({ code: null, signal: null, stderr: stderr.trim(), error });
    });
    // A failed group leader may leave members behind (apt, dpkg, maintainer scripts) that hold its
    // pipes open: they go at once, so that its pipes close.
    child.on('exit', (code) => {
      if (s.group && code !== 0) killGroup(child);
    });
    child.on('close', (code, signal) => {
      groups.delete(child);
      resolve({ code, signal, stderr: stderr.trim(), error });
    });
  });
  const gone = (): boolean => child.exitCode !== null || child.signalCode !== null;
  return {
    pid: child.pid,
    stdout: child.stdout!,
    write: (text) => {
      if (child.stdin?.writable) child.stdin.write(text);
    },
    end: (text) => {
      if (child.stdin?.writable) child.stdin.end(text);
    },
    exited,
    kill: () => {
      if (s.group) killGroup(child);
      else if (!gone()) child.kill('SIGKILL');
      return exited;
    },
    terminate: () => {
      if (!gone()) child.kill('SIGTERM');
    },
  };
}

/**
 * Run a program to its end. Resolves on exit status 0 (or any exit with `anyExit`); rejects with
 * AbortedError once it has ended after an abort, else with `fail(fault)`: the caller's error class
 * around the message written here.
 */
export function run(s: RunSpec, fail: (f: ChildFault) => Error): Promise<RunResult> {
  if (s.signal?.aborted) return Promise.reject(new AbortedError(`${s.command} aborted`));
  if (absent(s.command)) return Promise.reject(fail(missing(s.command)));
  const child = start({ ...s, interactive: s.input !== undefined });
  if (s.input !== undefined) child.end(s.input);
  let out = '';
  let over = false;
  child.stdout.setEncoding('utf8').on('data', (t: string) => {
    s.onStdout?.(t);
    if (!s.collect || over) return;
    if (out.length + t.length <= MAX_STDOUT) {
      out += t;
      return;
    }
    // Past the bound the output is refused whatever follows: the program need not run on.
    over = true;
    void child.kill();
  });
  let graceTimer: NodeJS.Timeout | undefined;
  const stop = (): void => {
    if (s.graceMs === undefined) {
      void child.kill();
      return;
    }
    child.terminate();
    graceTimer = setTimeout(() => void child.kill(), s.graceMs);
    graceTimer.unref();
  };
  s.signal?.addEventListener('abort', stop, { once: true });
  return child.exited.then((exit) => {
    s.signal?.removeEventListener('abort', stop);
    clearTimeout(graceTimer);
    const { error, ...ended } = exit;
    if (s.signal?.aborted) throw new AbortedError(`${s.command} aborted`);
    if (error) throw fail(error.code === 'ENOENT' ? missing(s.command, error) : { kind: 'start', message: `cannot run ${s.command}: ${error.message}`, cause: error });
    if (over) throw fail({ kind: 'output', message: `${s.command} printed more than ${MAX_STDOUT} bytes`, exit: ended });
    if (ended.code !== 0 && !s.anyExit) throw fail({ kind: 'exit', message: `${s.command} failed (${exitWords(ended)}): ${ended.stderr || 'no message'}`, exit: ended });
    return { ...ended, stdout: out };
  });
}

/** The same, synchronously, for probes and steps that must finish before anything else (bounded by `timeoutMs`). */
export function runSync(s: ChildSpec & { readonly timeoutMs?: number | undefined; readonly inherit?: boolean | undefined }): ChildExit & { readonly error?: Error | undefined } {
  const [cmd, argv] = commandLine(s);
  const r = spawnSync(cmd, argv, {
    cwd: s.cwd, env: environment(s), encoding: 'utf8', timeout: s.timeoutMs, maxBuffer: MAX_STDOUT,
    stdio: s.inherit ? 'inherit' : ['ignore', 'ignore', 'pipe'],
  });
  return { code: r.status, signal: r.signal, stderr: (r.stderr ?? '').slice(-MAX_STDERR).trim(), error: r.error };
}
