// Debian control-file syntax (deb822, Debian Policy §5.1): paragraphs separated by blank lines, each a
// list of `Field: value` lines whose value may continue on lines starting with a space or a tab.
// Field names are case-insensitive: they are kept lower-cased.

import { ImagingError } from '../errors';

export type Paragraph = ReadonlyMap<string, string>;

/** Where and why a text is not deb822: an 'input' ImagingError (the text is the image's). */
function notDeb822(line: number, message: string): never {
  throw new ImagingError('input', `line ${line}: ${message}`);
}

export function parseDeb822(text: string): Paragraph[] {
  const out: Paragraph[] = [];
  let cur: Map<string, string> | undefined;
  let last: string | undefined;
  const lines = text.split('\n');
  for (const [i, raw] of lines.entries()) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    const n = i + 1;
    if (line.trim() === '') {
      if (cur) out.push(cur);
      cur = undefined;
      last = undefined;
      continue;
    }
    if (line.startsWith('#') && !cur) continue;
    if (line.startsWith(' ') || line.startsWith('\t')) {
      if (!cur || last === undefined) notDeb822(n, 'a continuation line with no field before it');
      cur.set(last, `${cur.get(last)!}\n${line.slice(1)}`);
      continue;
    }
    const colon = line.indexOf(':');
    const name = colon > 0 ? line.slice(0, colon) : '';
    if (!/^[!-9;-~]+$/.test(name) || name.startsWith('-')) notDeb822(n, `not a "Field: value" line: ${JSON.stringify(line.slice(0, 80))}`);
    cur ??= new Map();
    const key = name.toLowerCase();
    if (cur.has(key)) notDeb822(n, `field ${name} appears twice in one paragraph`);
    cur.set(key, line.slice(colon + 1).trim());
    last = key;
  }
  if (cur) out.push(cur);
  return out;
}
