// The package's version, read from its package.json at run time (found upwards from this file, so that
// it works from `dist/`, from a bundle and from the sources alike).
import { readFileSync } from 'node:fs';
import path from 'node:path';

export function packageVersion(from = __dirname): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'appliance-forge' && pkg.version) return pkg.version;
    } catch {
      // no package.json here (or not ours): go up
    }
    if (path.dirname(dir) === dir) return 'unknown';
  }
}
