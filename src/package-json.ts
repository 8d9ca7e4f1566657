// This package's own package.json, found upwards from a file (so that it works from `dist/`, from a
// bundle and from the sources alike).
import { readFileSync } from 'node:fs';
import path from 'node:path';

export interface OwnPackageJson {
  readonly name: 'appliance-forge';
  readonly version: string;
  readonly peerDependencies?: Readonly<Record<string, string>>;
}

export function ownPackageJson(from = __dirname): OwnPackageJson | undefined {
  for (let dir = from; ; dir = path.dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as Partial<OwnPackageJson> & { name?: string };
      if (pkg.name === 'appliance-forge' && pkg.version) return pkg as OwnPackageJson;
    } catch {
      // no package.json here (or not ours): go up
    }
    if (path.dirname(dir) === dir) return undefined;
  }
}
