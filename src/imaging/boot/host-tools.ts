// The QEMU programs the boot check runs: the `boot` list of data/host-tools.json, which
// scripts/prereqs.sh installs from too; a missing one is told in the host's one vocabulary.
import hostTools from '../../../data/host-tools.json';
import { missingTools, packagesOf, toolsMissingMessage } from '../../host/tools';
import { BootCheckError } from './errors';

export type BootTool = keyof typeof hostTools.boot;

/** Throws a 'missing-tool' BootCheckError naming the Debian packages of every tool not on PATH. */
export function requireBootTools(tools: readonly BootTool[]): void {
  const missing = missingTools(tools);
  if (missing.length > 0) throw new BootCheckError('missing-tool', toolsMissingMessage(missing), packagesOf(missing));
}
