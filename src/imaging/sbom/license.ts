// A package's licence from its /usr/share/doc/<pkg>/copyright, when that file is machine-readable
// (DEP-5, "Machine-readable debian/copyright file", copyright-format 1.0) and each `Files:` paragraph
// names its licence with short names this table knows; anything less clear is NOASSERTION (SPDX 2.3
// §7.15: the creator makes no assertion), never a guess.
import { parseDeb822 } from './deb822';

export const NOASSERTION = 'NOASSERTION';

/** DEP-5 short names (§"License short name") → SPDX licence ids; lookup is case-insensitive. */
const SHORT_NAMES: Readonly<Record<string, string>> = {
  'gpl-1': 'GPL-1.0-only', 'gpl-1+': 'GPL-1.0-or-later',
  'gpl-2': 'GPL-2.0-only', 'gpl-2+': 'GPL-2.0-or-later', 'gpl-2.0': 'GPL-2.0-only', 'gpl-2.0+': 'GPL-2.0-or-later',
  'gpl-3': 'GPL-3.0-only', 'gpl-3+': 'GPL-3.0-or-later', 'gpl-3.0': 'GPL-3.0-only', 'gpl-3.0+': 'GPL-3.0-or-later',
  'lgpl-2': 'LGPL-2.0-only', 'lgpl-2+': 'LGPL-2.0-or-later',
  'lgpl-2.1': 'LGPL-2.1-only', 'lgpl-2.1+': 'LGPL-2.1-or-later',
  'lgpl-3': 'LGPL-3.0-only', 'lgpl-3+': 'LGPL-3.0-or-later', 'lgpl-3.0': 'LGPL-3.0-only', 'lgpl-3.0+': 'LGPL-3.0-or-later',
  'agpl-3': 'AGPL-3.0-only', 'agpl-3+': 'AGPL-3.0-or-later',
  'gfdl-1.2': 'GFDL-1.2-only', 'gfdl-1.2+': 'GFDL-1.2-or-later', 'gfdl-1.3': 'GFDL-1.3-only', 'gfdl-1.3+': 'GFDL-1.3-or-later',
  'apache-2.0': 'Apache-2.0', 'artistic': 'Artistic-1.0-Perl', 'artistic-2.0': 'Artistic-2.0',
  'bsd-2-clause': 'BSD-2-Clause', 'bsd-3-clause': 'BSD-3-Clause', 'bsd-4-clause': 'BSD-4-Clause', '0bsd': '0BSD',
  'expat': 'MIT', 'mit': 'MIT', 'isc': 'ISC', 'zlib': 'Zlib', 'x11': 'X11', 'curl': 'curl',
  'mpl-1.1': 'MPL-1.1', 'mpl-2.0': 'MPL-2.0', 'cc0-1.0': 'CC0-1.0', 'bsl-1.0': 'BSL-1.0', 'unlicense': 'Unlicense',
  'fsfap': 'FSFAP', 'fsful': 'FSFUL', 'fsfullr': 'FSFULLR', 'openssl': 'OpenSSL', 'wtfpl': 'WTFPL',
  'psf-2': 'PSF-2.0', 'python-2.0': 'Python-2.0', 'zope-2.1': 'ZPL-2.1', 'bzip2-1.0.6': 'bzip2-1.0.6',
  'unicode-dfs-2016': 'Unicode-DFS-2016', 'ofl-1.1': 'OFL-1.1', 'cc-by-3.0': 'CC-BY-3.0', 'cc-by-sa-3.0': 'CC-BY-SA-3.0',
  'cc-by-4.0': 'CC-BY-4.0', 'cc-by-sa-4.0': 'CC-BY-SA-4.0', 'ftl': 'FTL', 'libpng': 'Libpng', 'ijg': 'IJG',
};
/** The SPDX ids themselves, written as such in a copyright file. */
const SPDX_IDS = new Map(Object.values(SHORT_NAMES).map((id) => [id.toLowerCase(), id]));

/** One `License:` line ("GPL-2+ or Artistic"): an SPDX expression, or undefined when not clear. */
function expressionOf(line: string): string | undefined {
  const words = line.trim().split(/\s+/);
  const ids: string[] = [];
  const ops = new Set<string>();
  for (const [i, w] of words.entries()) {
    const lower = w.toLowerCase();
    if (i % 2 === 1) {
      if (lower !== 'or' && lower !== 'and') return undefined; // "with … exception", commas: not a clear expression
      ops.add(lower.toUpperCase());
      continue;
    }
    const id = SHORT_NAMES[lower] ?? SPDX_IDS.get(lower);
    if (id === undefined) return undefined;
    ids.push(id);
  }
  // Mixed AND and OR would need DEP-5's precedence spelt out: left unasserted.
  if (ids.length === 0 || words.length % 2 === 0 || ops.size > 1) return undefined;
  const unique = [...new Set(ids)].sort();
  return unique.join(` ${[...ops][0] ?? 'AND'} `);
}

/** The licence of a copyright file's text: its Files paragraphs' licences joined with AND, or NOASSERTION. */
export function licenseOf(copyright: string): string {
  let paragraphs;
  try {
    paragraphs = parseDeb822(copyright);
  } catch {
    return NOASSERTION;
  }
  const header = paragraphs[0];
  if (!header?.get('format')?.includes('copyright-format/1.0')) return NOASSERTION;
  const parts = new Set<string>();
  for (const p of paragraphs.slice(1)) {
    if (!p.has('files')) continue; // a stand-alone License paragraph: the text of a licence named elsewhere
    const first = p.get('license')?.split('\n')[0];
    const e = first === undefined ? undefined : expressionOf(first);
    if (e === undefined) return NOASSERTION;
    parts.add(e);
  }
  if (parts.size === 0) return NOASSERTION;
  const sorted = [...parts].sort();
  return sorted.length === 1 ? sorted[0]! : sorted.map((e) => (e.includes(' OR ') ? `(${e})` : e)).join(' AND ');
}
