// An ordinary user's build. Its tools already run in a user namespace (host/sandbox.ts), but the
// build process itself also writes into the tree, whose files belong to the namespace's ids: so the
// whole disk stage runs in a child process that is root of that namespace (in-namespace-main.ts),
// where it builds as a privileged build would. Progress, the result and errors come back as JSON lines.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { AbortedError } from '../errors';
import { diesWithParent } from '../host/child';
import { sandboxed, type Sandbox } from '../host/sandbox';
import type { BuildImageOptions, BuiltImage } from './build';
import { ImagingError, type ImagingErrorKind } from './errors';
import type { BuildProgress } from './progress';

/** What crosses to the child: the options without the callbacks. */
export type NamespaceJob = Omit<BuildImageOptions, 'signal' | 'onProgress' | 'sandbox'>;

/** One line of the child's stdout. */
export type NamespaceReport =
  | { readonly progress: BuildProgress }
  | { readonly result: BuiltImage }
  | { readonly error: { readonly name: string; readonly kind?: ImagingErrorKind | undefined; readonly message: string } };

const MAX_STDERR = 16 * 1024;
const ABORT_GRACE_MS = 15_000;
const ERROR_KINDS: readonly ImagingErrorKind[] = ['input', 'disk-full', 'tool', 'prerequisite'];

/**
 * The child's script: beside this module once compiled (dist/, the Action's bundle); when this module
 * runs from its TypeScript source (the tests), the compiled one under dist/, which `npm test` builds first.
 */
function namespaceScript(): string {
  if (!__filename.endsWith('.ts')) return join(__dirname, 'in-namespace-main.js');
  let root = __dirname;
  while (!existsSync(join(root, 'package.json')) && dirname(root) !== root) root = dirname(root);
  return join(root, 'dist', relative(root, __dirname), 'in-namespace-main.js');
}

export function buildInNamespace(o: BuildImageOptions, sandbox: Sandbox): Promise<BuiltImage> {
  const script = namespaceScript();
  if (!existsSync(script)) return Promise.reject(new ImagingError('prerequisite', `the build's namespace process ${script} is missing: build the package (npm run build)`));
  const { signal, onProgress, sandbox: _ignored, ...job } = o;
  void _ignored;
  return new Promise<BuiltImage>((resolve, reject) => {
    if (signal?.aborted) return reject(new AbortedError('image build aborted'));
    const [cmd, argv] = sandboxed(sandbox, ...diesWithParent(process.execPath, [script]));
    // In the namespace this process is root: it builds as a privileged build does, with no second namespace.
    const child = spawn(cmd, argv, { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, APPLIANCE_FORGE_SANDBOX: 'privileged' } });
    let outcome: { result: BuiltImage } | { error: Error } | undefined;
    let pending = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => {
      pending += s;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        if (line === '') continue;
        let r: NamespaceReport;
        try {
          r = JSON.parse(line) as NamespaceReport;
        } catch {
          // Not a report (a tool's stray output): kept with stderr for the error, never thrown in this handler.
          stderr = (stderr + line + '\n').slice(-MAX_STDERR);
          continue;
        }
        if ('progress' in r) onProgress?.(r.progress);
        else if ('result' in r) outcome = { result: r.result };
        else outcome = { error: rebuildError(r.error) };
      }
    });
    child.stderr.setEncoding('utf8').on('data', (s: string) => {
      stderr = (stderr + s).slice(-MAX_STDERR);
    });
    child.stdin.on('error', () => undefined); // a child that died early: its exit says why
    child.stdin.end(JSON.stringify(job satisfies NamespaceJob));
    // SIGTERM first: the child aborts its build, which removes what it had written (a `.part` file, its
    // scratch); SIGKILL only if it has not ended after ABORT_GRACE_MS.
    let killTimer: NodeJS.Timeout | undefined;
    const kill = (): void => {
      child.kill('SIGTERM');
      killTimer = setTimeout(() => child.kill('SIGKILL'), ABORT_GRACE_MS);
      killTimer.unref();
    };
    signal?.addEventListener('abort', kill, { once: true });
    child.on('error', (e) => {
      signal?.removeEventListener('abort', kill);
      reject(new ImagingError('tool', `cannot start the build's namespace process: ${e.message}`, e));
    });
    child.on('close', (code, sig) => {
      signal?.removeEventListener('abort', kill);
      clearTimeout(killTimer);
      if (signal?.aborted) return reject(new AbortedError('image build aborted'));
      if (outcome && 'result' in outcome) return resolve(outcome.result);
      if (outcome) return reject(outcome.error);
      reject(new ImagingError('tool', `the build's namespace process ended (${code !== null ? `exit status ${code}` : `signal ${sig ?? 'unknown'}`}): ${stderr.trim() || 'no message'}`));
    });
  });
}

function rebuildError(e: { name: string; kind?: ImagingErrorKind | undefined; message: string }): Error {
  if (e.name === 'AbortedError') return new AbortedError(e.message);
  return new ImagingError(e.kind !== undefined && ERROR_KINDS.includes(e.kind) ? e.kind : 'tool', e.message);
}
