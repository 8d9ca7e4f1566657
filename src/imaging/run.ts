// Running the e2fsprogs and qemu-img tools: no shell, abortable (the child is killed and the call
// throws AbortedError), stderr kept (bounded) for the error message.
import { spawn } from 'node:child_process';
import { AbortedError } from '../errors';
import hostTools from '../../data/host-tools.json';
import { diesWithParent } from '../host/child';
import { findOnPath } from '../host/path';
import { blockedFolder, sandboxed, type Sandbox } from '../host/sandbox';
import { ImagingError } from './errors';

/** Keep the last bytes of a tool's stderr: enough for its message, bounded whatever it prints. */
const MAX_STDERR = 16 * 1024;

export interface RunOptions {
  readonly signal?: AbortSignal | undefined;
  /** Working directory of the tool (paths can then be passed relative to it). */
  readonly cwd?: string;
  /** Each chunk of stdout as it comes (progress lines). */
  readonly onStdout?: (text: string) => void;
  /** Written to the tool's stdin (e.g. `name:hash` lines for chpasswd: never on a command line). */
  readonly input?: string;
  /** Run as root of the build's user namespace (tools that read or write a build's tree). */
  readonly sandbox?: Sandbox | undefined;
}

/** The Debian package of each host tool a build runs (data/host-tools.json, the one list; scripts/prereqs.sh installs it). */
const PACKAGE_OF: Record<string, string> = hostTools.build;
const BUILD_PACKAGES = [...new Set(Object.values(hostTools.build))].join(' ');

function missingTool(command: string, cause?: Error): ImagingError {
  const pkg = PACKAGE_OF[command] ?? command;
  return new ImagingError('prerequisite', `${command} is not installed on this host: install the Debian package ${pkg} (an image build needs: apt-get install ${BUILD_PACKAGES})`, cause);
}

export interface RunResult {
  readonly stderr: string;
}

/** Run a tool and return its whole stdout (bounded: for short reports such as filefrag's). */
export async function runToolOutput(command: string, args: readonly string[], opts: Omit<RunOptions, 'onStdout'> = {}): Promise<string> {
  const MAX_STDOUT = 64 * 1024 * 1024;
  let out = '';
  let over = false;
  await runTool(command, args, {
    ...opts,
    onStdout: (s) => {
      if (over || out.length + s.length > MAX_STDOUT) over = true;
      else out += s;
    },
  });
  if (over) throw new ImagingError('tool', `${command} printed more than ${MAX_STDOUT} bytes`);
  return out;
}

export function runTool(command: string, args: readonly string[], opts: RunOptions = {}): Promise<RunResult> {
  const { signal, onStdout, cwd, input, sandbox } = opts;
  return new Promise<RunResult>((resolve, reject) => {
    if (signal?.aborted) return reject(new AbortedError('image build aborted'));
    // The parent-death signal is set inside the namespace: changing to its root would clear it.
    const [cmd, argv] = sandbox ? sandboxed(sandbox, ...diesWithParent(command, args)) : diesWithParent(command, args);
    if (!findOnPath(command)) return reject(missingTool(command));
    const child = spawn(cmd, argv, { stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'], cwd, env: { ...process.env, LC_ALL: 'C' } });
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (s: string) => {
      stderr = (stderr + s).slice(-MAX_STDERR);
    });
    if (input !== undefined && child.stdin) {
      child.stdin.on('error', () => undefined); // a tool that exits early closes its stdin: its exit status tells
      child.stdin.end(input);
    }
    child.stdout!.setEncoding('utf8').on('data', (s: string) => onStdout?.(s));
    const onAbort = (): void => {
      child.kill('SIGKILL');
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    child.on('error', (e: NodeJS.ErrnoException) => {
      signal?.removeEventListener('abort', onAbort);
      if (e.code === 'ENOENT') return reject(missingTool(command, e));
      reject(new ImagingError('tool', `cannot run ${command}: ${e.message}`, e));
    });
    child.on('close', (code, sig) => {
      signal?.removeEventListener('abort', onAbort);
      if (signal?.aborted) return reject(new AbortedError('image build aborted'));
      if (code === 0) return resolve({ stderr });
      const why = code !== null ? `exit status ${code}` : `signal ${sig ?? 'unknown'}`;
      reject(new ImagingError('tool', `${command} failed (${why}): ${stderr.trim() || 'no message'}`));
    });
  });
}

/** Refuses a folder the build's namespace root cannot reach (the cache, a work dir), saying what to change. */
export function assertReachable(sandbox: Sandbox, dir: string, what: string): void {
  const blocked = blockedFolder(sandbox, dir);
  if (blocked === undefined) return;
  throw new ImagingError('prerequisite', `the ${what} ${dir} cannot be reached from the build's user namespace: ${blocked} lets no other user through (chmod o+x ${blocked}, or choose another cache folder)`);
}
