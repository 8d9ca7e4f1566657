// The image builder's tools (e2fsprogs, qemu-img, cp, dpkg-query…) through the host's one runner
// (host/child.ts): its faults become ImagingErrors, a missing tool a 'prerequisite' one.
import { run, type ChildFault, type RunSpec } from '../host/child';
import { ImagingError } from './errors';

export interface RunOptions {
  readonly signal?: AbortSignal | undefined;
  /** Working directory of the tool (paths can then be passed relative to it). */
  readonly cwd?: string;
  /** Each chunk of stdout as it comes (progress lines). */
  readonly onStdout?: (text: string) => void;
  /** Written to the tool's stdin (e.g. `name:hash` lines for chpasswd: never on a command line). */
  readonly input?: string | undefined;
  /** A command prefix to run it through (root of the build's user namespace: BuildHost.run). */
  readonly within?: readonly string[] | undefined;
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

function spec(command: string, args: readonly string[], opts: RunOptions): RunSpec {
  return { ...opts, command, args };
}

/** Run a tool and return its whole stdout (bounded: for short reports such as filefrag's). */
export async function runToolOutput(command: string, args: readonly string[], opts: Omit<RunOptions, 'onStdout'> = {}): Promise<string> {
  return (await run({ ...spec(command, args, opts), collect: true }, imagingFault)).stdout;
}

export async function runTool(command: string, args: readonly string[], opts: RunOptions = {}): Promise<RunResult> {
  return run(spec(command, args, opts), imagingFault);
}
