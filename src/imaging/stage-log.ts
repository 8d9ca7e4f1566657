// Where a build's time goes: with APPLIANCE_FORGE_LOG=debug, each stage of an image build is one
// stderr line when it ends (`debug: build: copying the OS layer 1.42 s`), in the process that builds
// (`serve`'s stderr). A command that builds on its embedded server routes the lines into its own debug
// output instead (routeBuildNotes): masked, JSON Lines with --json, and its log file.

import { debugLogOn } from '../debug-log';

let route: ((line: string) => void) | undefined;

const enabled = (): boolean => route !== undefined || debugLogOn();

/** Sends this process's build notes to `to` until the returned function is called. */
export function routeBuildNotes(to: (line: string) => void): () => void {
  const before = route;
  route = to;
  return () => {
    route = before;
  };
}

/** One line of the build's debug log. */
export function buildNote(text: string): void {
  if (route) route(`build: ${text}`);
  else if (enabled()) process.stderr.write(`debug: build: ${text}\n`);
}

/** Run one stage, and say how long it took (failed or not) when the debug log is on. */
export async function timed<T>(stage: string, f: () => Promise<T>): Promise<T> {
  if (!enabled()) return f();
  const t0 = performance.now();
  try {
    return await f();
  } finally {
    buildNote(`${stage} ${((performance.now() - t0) / 1000).toFixed(2)} s`);
  }
}
