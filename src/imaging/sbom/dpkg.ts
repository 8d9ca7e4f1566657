// The packages of an image, from its dpkg database (/var/lib/dpkg/status, deb822; dpkg's
// "Package", "Version", "Architecture", "Source", "Status" fields, deb-control(5)). Every package
// whose files are on disk counts: the `dpkg-query -W` view of a freshly built tree.
import { ImagingError, isImagingError } from '../errors';
import { parseDeb822 } from './deb822';

export const DPKG_STATUS = '/var/lib/dpkg/status';

export interface DebPackage {
  readonly name: string;
  readonly version: string;
  readonly arch: string;
  /** The source package and its version (the binary's own when the status names none). */
  readonly source: string;
  readonly sourceVersion: string;
}

/** dpkg's states whose package has no files on disk: purged or only its configuration kept. */
const ABSENT_STATES = new Set(['not-installed', 'config-files']);
// deb-version(7) and the package-name rule of Debian Policy §5.6.1/§5.6.12.
const NAME = /^[a-z0-9][a-z0-9.+-]+$/;
const VERSION = /^(?:\d+:)?[A-Za-z0-9][A-Za-z0-9.+~:-]*$/;
const ARCH = /^[a-z0-9][a-z0-9-]*$/;

function malformed(detail: string): never {
  throw new ImagingError('input', `the image's dpkg database ${DPKG_STATUS} is malformed: ${detail}`);
}

/** The installed packages of a status file's text, sorted by name then architecture. */
export function parseDpkgStatus(text: string): DebPackage[] {
  let paragraphs;
  try {
    paragraphs = parseDeb822(text);
  } catch (e) {
    if (isImagingError(e, 'input')) malformed(e.message);
    throw e;
  }
  const out: DebPackage[] = [];
  const seen = new Set<string>();
  for (const [i, p] of paragraphs.entries()) {
    const field = (f: string): string | undefined => p.get(f);
    const name = field('package');
    const where = `paragraph ${i + 1}${name === undefined ? '' : ` (${JSON.stringify(name.slice(0, 80))})`}`;
    const status = field('status')?.split(/\s+/);
    if (name === undefined || status?.length !== 3) malformed(`${where} has no Package or no three-word Status`);
    if (ABSENT_STATES.has(status[2]!)) continue;
    const version = field('version') ?? '';
    const arch = field('architecture') ?? '';
    if (!NAME.test(name)) malformed(`${where}: bad package name`);
    if (!VERSION.test(version)) malformed(`${where}: bad or missing Version ${JSON.stringify(version.slice(0, 80))}`);
    if (!ARCH.test(arch)) malformed(`${where}: bad or missing Architecture`);
    const key = `${name}:${arch}`;
    if (seen.has(key)) malformed(`${where}: ${key} is listed twice`);
    seen.add(key);
    // "Source: name" or "Source: name (version)" (deb-control(5)).
    const src = /^([a-z0-9][a-z0-9.+-]+)(?:\s+\(([^()\s]+)\))?$/.exec(field('source') ?? name);
    if (!src || (src[2] !== undefined && !VERSION.test(src[2]))) malformed(`${where}: bad Source field`);
    out.push({ name, version, arch, source: src[1]!, sourceVersion: src[2] ?? version });
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.arch < b.arch ? -1 : a.arch > b.arch ? 1 : 0));
}
