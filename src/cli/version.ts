// The package's version, read from its package.json at run time.
import { ownPackageJson } from '../package-json';

export function packageVersion(from = __dirname): string {
  return ownPackageJson(from)?.version ?? 'unknown';
}
