// The image builder's tools (e2fsprogs, qemu-img, cp, dpkg-query…) through the host's one runner
// (host/child.ts): its faults become ImagingErrors, a missing tool a 'prerequisite' one.
import { run, type ChildFault, type RunSpec } from '../host/child';
import { blockedFolder, sandboxPrefix, type Sandbox } from '../host/sandbox';
import { ImagingError } from './errors';

export interface RunOptions {
  readonly signal?: AbortSignal | undefined;
  /** Working directory of the tool (paths can then be passed relative to it). */
  readonly cwd?: string;
  /** Each chunk of stdout as it comes (progress lines). */
  readonly onStdout?: (text: string) => void;
  /** Written to the tool's stdin (e.g. `name:hash` lines for chpasswd: never on a command line). */
  readonly input?: string | undefined;
  /** Run as root of the build's user namespace (tools that read or write a build's tree). */
  readonly sandbox?: Sandbox | undefined;
  /** Set on top of the environment (e.g. SOURCE_DATE_EPOCH). */
  readonly env?: Readonly<Record<string, string>> | undefined;
}

export interface RunResult {
  readonly stderr: string;
}

/** A fault of the host runner as the builder's error. */
export function imagingFault(f: ChildFault): ImagingError {
  return new ImagingError(f.kind === 'missing' ? 'prerequisite' : 'tool', f.message, f.cause);
}

function spec(command: string, args: readonly string[], { sandbox, ...opts }: RunOptions): RunSpec {
  return { ...opts, command, args, within: sandboxPrefix(sandbox) };
}

/** Run a tool and return its whole stdout (bounded: for short reports such as filefrag's). */
export async function runToolOutput(command: string, args: readonly string[], opts: Omit<RunOptions, 'onStdout'> = {}): Promise<string> {
  return (await run({ ...spec(command, args, opts), collect: true }, imagingFault)).stdout;
}

export async function runTool(command: string, args: readonly string[], opts: RunOptions = {}): Promise<RunResult> {
  return run(spec(command, args, opts), imagingFault);
}

/** Refuses a folder the build's namespace root cannot reach (the cache, a work dir), saying what to change. */
export function assertReachable(sandbox: Sandbox, dir: string, what: string): void {
  const problem = unreachable(sandbox, dir, what);
  if (problem !== undefined) throw new ImagingError('setup', problem);
}

/** Why the build's namespace root cannot reach `dir` (what to change), or undefined when it can. */
export function unreachable(sandbox: Sandbox, dir: string, what: string): string | undefined {
  const blocked = blockedFolder(sandbox, dir);
  if (blocked === undefined) return undefined;
  return `the ${what} ${dir} cannot be reached from the build's user namespace: ${blocked} lets no other user through (chmod o+x ${blocked}, or choose another cache folder)`;
}
