// The QEMU programs the boot check runs, and the Debian packages that provide them: the `boot` list
// of data/host-tools.json, which scripts/prereqs.sh installs from too.
import hostTools from '../../../data/host-tools.json';
import { findOnPath } from '../../host/path';
import { BootCheckError } from './errors';

export type BootTool = keyof typeof hostTools.boot;

/** Throws a 'missing-tool' BootCheckError naming the Debian packages of every tool not on PATH. */
export function requireBootTools(tools: readonly BootTool[]): void {
  const missing = tools.filter((t) => findOnPath(t) === undefined);
  if (missing.length === 0) return;
  const packages = [...new Set(missing.map((t) => hostTools.boot[t]))].sort();
  throw new BootCheckError(
    'missing-tool',
    `${missing.join(' and ')} not found on PATH: install the Debian package${packages.length > 1 ? 's' : ''} ${packages.join(' ')} (apt-get install ${packages.join(' ')})`,
    packages,
  );
}
