// A bundle file's `source` is uploaded to the service, by the Action's embedded builds as root: it may
// name only a file inside the declaration's folder, judged on real paths, so that an absolute path, a
// `../` or a committed link pointing out cannot send another file of the machine, unless the user
// allows it. Validation, plan and apply all read sources through here (parse.ts).
import { realpathSync, statSync } from 'node:fs';
import path from 'node:path';

/** The command line's option; the Action's input has the same name. */
export const ALLOW_OUTSIDE_SOURCES = 'allow-outside-sources';

export interface SourceRoot {
  /** The declaration's folder: sources are relative to it. */
  readonly dir: string;
  /** Accept sources outside `dir` (`--allow-outside-sources`). */
  readonly allowOutside: boolean;
}

/** The file to upload (its real path), or the problem to report at the `source` value. */
export type ResolvedSource = { readonly path: string } | { readonly problem: string };

export function resolveBundleSource(root: SourceRoot, source: string): ResolvedSource {
  const abs = path.resolve(root.dir, source);
  let real: string;
  try {
    if (!statSync(abs).isFile()) throw new Error('not a file');
    real = realpathSync(abs);
  } catch {
    return { problem: `file not found: ${source} (relative to the declaration)` };
  }
  if (root.allowOutside) return { path: real };
  const rel = path.relative(realpathSync(root.dir), real);
  if (rel === '' || rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)) {
    return {
      problem:
        `bundle source ${source} is outside the declaration's folder (it is ${real}): only files under ${root.dir} are ` +
        `uploaded, unless allowed with --${ALLOW_OUTSIDE_SOURCES} (the Action's input ${ALLOW_OUTSIDE_SOURCES}: true)`,
    };
  }
  return { path: real };
}
