// The host programs (and files) the package runs, from data/host-tools.json: the one list that
// scripts/prereqs.sh installs from, and the one way a missing one is told, whoever finds it missing.
import hostTools from '../../data/host-tools.json';
import { hostToolPresent } from './path';

/** A purpose of data/host-tools.json: the argument of `bash scripts/prereqs.sh`. */
export type ToolPurpose = 'build' | 'boot' | 'catalog' | 'test';

const TABLE: Readonly<Record<ToolPurpose, Readonly<Record<string, string>>>> = hostTools;
const PURPOSES: readonly ToolPurpose[] = ['build', 'boot', 'catalog', 'test'];
const WHAT: Readonly<Record<ToolPurpose, string>> = { build: 'image builds', boot: 'the boot check', catalog: "the catalog's refresh from a mirror", test: 'the tests' };

/** The tools (and files) a purpose needs. */
export function toolsFor(purpose: ToolPurpose): string[] {
  return Object.keys(TABLE[purpose]);
}

/** Those of `tools` this host lacks (programs on PATH with sbin; files by absolute path). */
export function missingTools(tools: readonly string[]): string[] {
  return tools.filter((t) => !hostToolPresent(t));
}

/** The Debian packages that provide `tools`, sorted, once each (a tool outside the list stands for itself). */
export function packagesOf(tools: readonly string[]): string[] {
  return [...new Set(tools.map((t) => PURPOSES.map((p) => TABLE[p][t]).find((pkg) => pkg !== undefined) ?? t))].sort();
}

/** What to say when `tools` are missing: the Debian packages, and the prereqs.sh purpose that installs them. */
export function toolsMissingMessage(tools: readonly string[]): string {
  const packages = packagesOf(tools);
  const pkgs = packages.join(' ');
  const several = packages.length > 1;
  const purpose = PURPOSES.find((p) => tools.every((t) => t in TABLE[p])) ?? PURPOSES.find((p) => tools.some((t) => t in TABLE[p]));
  const all = purpose === undefined ? '' : `, or bash scripts/prereqs.sh ${purpose} for every tool of ${WHAT[purpose]}`;
  return `${tools.join(' and ')} ${tools.length > 1 ? 'are' : 'is'} not installed on this host: install the Debian package${several ? 's' : ''} ${pkgs} (apt-get install ${pkgs}${all})`;
}
