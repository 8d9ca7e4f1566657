// An ordinary user's build. Its tools already run in a user namespace (build-host.ts), but the
// build process itself also writes into the tree, whose files belong to the namespace's ids: so the
// whole disk stage runs in a child process that is root of that namespace (in-namespace-main.ts),
// where it builds as a privileged build would. Progress, the result and errors come back as JSON lines.
import { existsSync } from 'node:fs';
import { AbortedError } from '../../errors';
import { exitWords, MAX_STDERR, run } from '../../host/child';
import { compiledScript } from '../../host/compiled-script';
import type { BuildHost } from '../build-host';
import type { BuildImageOptions, BuiltImage } from './build-options';
import { ImagingError, type ImagingErrorKind } from '../errors';
import type { BuildProgress } from '../progress';

/** What crosses to the child: the options without the callbacks. */
export type NamespaceJob = Omit<BuildImageOptions, 'signal' | 'onProgress' | 'host'>;

/** One line of the child's stdout. */
export type NamespaceReport =
  | { readonly progress: BuildProgress }
  | { readonly result: BuiltImage }
  | { readonly error: { readonly name: string; readonly kind?: ImagingErrorKind | undefined; readonly message: string } };

const ABORT_GRACE_MS = 15_000;
const ERROR_KINDS: readonly ImagingErrorKind[] = ['input', 'disk-full', 'tool', 'prerequisite', 'setup'];


export async function buildInNamespace(o: BuildImageOptions, host: BuildHost): Promise<BuiltImage> {
  const script = compiledScript('in-namespace-main.js', __filename, __dirname);
  if (!existsSync(script)) throw new ImagingError('prerequisite', `the build's namespace process ${script} is missing: build the package (npm run build)`);
  const { signal, onProgress, host: _ignored, ...job } = o;
  void _ignored;
  let outcome: { result: BuiltImage } | { error: Error } | undefined;
  let pending = '';
  let stray = '';
  const onStdout = (s: string): void => {
    pending += s;
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      if (line === '') continue;
      let r: NamespaceReport;
      try {
        r = JSON.parse(line) as NamespaceReport;
      } catch {
        // Not a report (a tool's stray output): kept for the error, never thrown in this handler.
        stray = (stray + line + '\n').slice(-MAX_STDERR);
        continue;
      }
      if ('progress' in r) onProgress?.(r.progress);
      else if ('result' in r) outcome = { result: r.result };
      else outcome = { error: rebuildError(r.error) };
    }
  };
  // In the namespace this process is root: it builds as a privileged build does, with no second namespace.
  // An abort sends SIGTERM first: the child aborts its build, which removes what it had written (a
  // `.part` file, its scratch); SIGKILL only if it has not ended after ABORT_GRACE_MS.
  const ended = await run(
    {
      command: process.execPath, args: [script], within: host.prefix, env: { APPLIANCE_FORGE_SANDBOX: 'privileged' },
      input: JSON.stringify(job satisfies NamespaceJob), onStdout, signal, graceMs: ABORT_GRACE_MS, anyExit: true,
    },
    (f) => new ImagingError('tool', `cannot start the build's namespace process: ${f.message}`, f.cause),
  );
  if (outcome && 'result' in outcome) return outcome.result;
  if (outcome) throw outcome.error;
  const said = `${stray}${ended.stderr}`.trim();
  throw new ImagingError('tool', `the build's namespace process ended (${exitWords(ended)}): ${said || 'no message'}`);
}

function rebuildError(e: { name: string; kind?: ImagingErrorKind | undefined; message: string }): Error {
  if (e.name === 'AbortedError') return new AbortedError(e.message);
  return new ImagingError(e.kind !== undefined && ERROR_KINDS.includes(e.kind) ? e.kind : 'tool', e.message);
}
