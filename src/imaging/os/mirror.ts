// Which Debian mirror the OS layer comes from: the host's own apt sources (the mirror that is known to
// answer on this machine and on CI), else deb.debian.org. The parsers are pure so they are tested on texts.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ImagingError } from '../errors';
import type { MirrorConfig } from '../stages';
import { DEBIAN_ARCHIVE } from '../../model/releases';

export const DEFAULT_MIRROR: MirrorConfig = Object.freeze({ archive: DEBIAN_ARCHIVE.mirror, security: DEBIAN_ARCHIVE.securityMirror });

/** One enabled binary (`deb`) source: its URI and suites. */
export interface AptSource {
  readonly uri: string;
  readonly suites: readonly string[];
}

/** deb822 `.sources` text: stanzas separated by blank lines, `#` comments, `Enabled: no` skips a stanza. */
export function parseDeb822Sources(text: string): AptSource[] {
  const out: AptSource[] = [];
  for (const stanza of text.split(/\n[ \t]*\n/)) {
    const fields = new Map<string, string>();
    let last: string | undefined;
    for (const line of stanza.split('\n')) {
      if (/^\s*#/.test(line) || line.trim() === '') continue;
      // A continuation line (leading space) belongs to the previous field (e.g. a multi-line Signed-By key).
      if (/^[ \t]/.test(line) && last !== undefined) {
        fields.set(last, `${fields.get(last) ?? ''}\n${line.trim()}`);
        continue;
      }
      const m = /^([A-Za-z0-9-]+):\s*(.*)$/.exec(line);
      if (!m) continue;
      last = m[1]!.toLowerCase();
      fields.set(last, m[2]!.trim());
    }
    if (/^(no|false|0)$/i.test(fields.get('enabled') ?? 'yes')) continue;
    const types = (fields.get('types') ?? '').split(/\s+/);
    if (!types.includes('deb')) continue;
    const suites = (fields.get('suites') ?? '').split(/\s+/).filter(Boolean);
    for (const uri of (fields.get('uris') ?? '').split(/\s+/).filter(Boolean)) out.push({ uri, suites });
  }
  return out;
}

/** One-line `sources.list` text: `deb [opt=val …] URI SUITE COMPONENT…`; `deb-src` and comments skipped. */
export function parseOneLineSources(text: string): AptSource[] {
  const out: AptSource[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.replace(/#.*$/, '').trim();
    const m = /^deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+(\S+)/.exec(line);
    if (m) out.push({ uri: m[1]!, suites: [m[2]!] });
  }
  return out;
}

/**
 * The mirror of the first Debian source: the archive is the first source with a plain suite
 * (`bookworm`, `bookworm-updates`), the security archive the first with a `-security` suite.
 */
export function mirrorFromSources(sources: readonly AptSource[]): MirrorConfig | undefined {
  const http = sources.filter((s) => /^https?:\/\//.test(s.uri));
  const archive = http.find((s) => s.suites.some((x) => !x.endsWith('-security')));
  if (!archive) return undefined;
  const security = http.find((s) => s.suites.some((x) => x.endsWith('-security')));
  return { archive: trimSlash(archive.uri), security: security && trimSlash(security.uri) };
}

/** The host's apt sources (deb822 files first, as apt reads them, then sources.list), else deb.debian.org. */
export function defaultMirror(etcApt = '/etc/apt'): MirrorConfig {
  const sources: AptSource[] = [];
  const dir = join(etcApt, 'sources.list.d');
  let names: string[] = [];
  try {
    names = readdirSync(dir).sort();
  } catch {
    // no sources.list.d: only sources.list counts
  }
  for (const n of names) {
    if (n.endsWith('.sources')) sources.push(...parseDeb822Sources(readText(join(dir, n))));
    else if (n.endsWith('.list')) sources.push(...parseOneLineSources(readText(join(dir, n))));
  }
  sources.push(...parseOneLineSources(readText(join(etcApt, 'sources.list'))));
  const found = mirrorFromSources(sources);
  if (!found) return DEFAULT_MIRROR;
  return { archive: found.archive, security: found.security ?? DEFAULT_MIRROR.security! };
}

/** A mirror given by a user: http(s) URLs only (no file:, no credentials, no query), trailing slash dropped. */
export function validateMirror(m: MirrorConfig): MirrorConfig {
  const check = (what: string, url: string): string => {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      throw new ImagingError('input', `${what} mirror is not a URL: ${JSON.stringify(url)}`);
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new ImagingError('input', `${what} mirror must be an http(s) URL, not ${u.protocol}`);
    if (u.username || u.password) throw new ImagingError('input', `${what} mirror must not carry credentials`);
    if (u.search || u.hash) throw new ImagingError('input', `${what} mirror must not have a query or fragment`);
    if (/\s/.test(url)) throw new ImagingError('input', `${what} mirror must not contain spaces`);
    return trimSlash(u.toString());
  };
  return { archive: check('archive', m.archive), security: m.security === undefined ? undefined : check('security', m.security) };
}

function trimSlash(u: string): string {
  return u.replace(/\/+$/, '');
}

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}
