// The disk stage of an ordinary user's build, run as root of its user namespace (in-namespace.ts):
// the job on stdin, JSON lines on stdout. SIGTERM from the parent cancels the build, which cleans up
// as an aborted build does; the parent's SIGKILL follows if it lingers.
import { buildImage } from './build';
import { isImagingError } from '../errors';
import type { NamespaceJob, NamespaceReport } from './in-namespace';

function send(r: NamespaceReport): void {
  process.stdout.write(`${JSON.stringify(r)}\n`);
}

async function main(): Promise<void> {
  let input = '';
  for await (const chunk of process.stdin) input += String(chunk);
  const job = JSON.parse(input) as NamespaceJob;
  const ac = new AbortController();
  process.on('SIGTERM', () => ac.abort()); // `on`: a last listener's re-raise (proper-lockfile's signal-exit) would kill the child before its clean-up
  try {
    const result = await buildImage({ ...job, signal: ac.signal, onProgress: (progress) => send({ progress }) });
    send({ result });
  } catch (e) {
    const err = e instanceof Error ? e : new Error(String(e));
    send({ error: { name: err.name, kind: isImagingError(err) ? err.kind : undefined, message: err.message } });
  }
}

void main();
