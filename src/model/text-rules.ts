// Which characters a text may hold: the one rule every reader of text uses (the codec, the server's
// checks and messages, the engine's reader and report, the client, the image build). Written over
// code units, not as a pattern, so that no source file holds a control character in a regex.

/** C0 control characters (U+0000–U+001F) and DEL. */
export const isControl = (code: number): boolean => code < 0x20 || code === 0x7f;

/** The control characters a multi-line text keeps: tab and newline (a carriage return is refused). */
export const TAB_AND_NEWLINE = '\t\n';

/** Index of the first control character of `s` that is not one of `allowed`, or -1. */
export function controlAt(s: string, allowed = ''): number {
  for (let i = 0; i < s.length; i++) {
    if (isControl(s.charCodeAt(i)) && !allowed.includes(s[i]!)) return i;
  }
  return -1;
}

/** Whether `s` holds a control character other than those in `allowed`. */
export const hasControl = (s: string, allowed = ''): boolean => controlAt(s, allowed) >= 0;

/** `s` with each run of control characters (but those in `allowed`) replaced by `by(run)`. */
export function replaceControls(s: string, by: (run: string) => string, allowed = ''): string {
  return replaceRuns(s, (i) => (isControl(s.charCodeAt(i)) && !allowed.includes(s[i]!) ? 1 : 0), by);
}

const isHigh = (c: number): boolean => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number): boolean => c >= 0xdc00 && c <= 0xdfff;
/** A surrogate pair starts at `i`: one character in two code units. */
const isPair = (s: string, i: number): boolean => isHigh(s.charCodeAt(i)) && isLow(s.charCodeAt(i + 1));

/**
 * Length of the character at `i` that XML 1.0 cannot carry, even as a character reference: a C0 control
 * but tab, newline and carriage return; U+FFFE and U+FFFF; a lone surrogate. 0 when it is allowed.
 */
function nonXmlAt(s: string, i: number): number {
  const c = s.charCodeAt(i);
  if (c < 0x20) return c === 0x09 || c === 0x0a || c === 0x0d ? 0 : 1;
  if (c === 0xfffe || c === 0xffff) return 1;
  if (isLow(c)) return 1;
  return isHigh(c) && !isLow(s.charCodeAt(i + 1)) ? 1 : 0;
}

/** Whether `s` holds a character an XML 1.0 document cannot carry: such a value is never stored. */
export function hasNonXmlChar(s: string): boolean {
  for (let i = 0; i < s.length; i += isPair(s, i) ? 2 : 1) if (nonXmlAt(s, i)) return true;
  return false;
}

/** `s` with each run of characters XML cannot carry replaced by `by(run)`. */
export const replaceNonXml = (s: string, by: (run: string) => string): string => replaceRuns(s, (i) => nonXmlAt(s, i), by);

/** `\u0001`: a character shown as its escape, for a message that must stay printable. */
export const escapeChars = (run: string): string =>
  [...run].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');

/** Replaces each run of characters `bad` marks (the length of the character at an index; 0: a good one). */
function replaceRuns(s: string, bad: (i: number) => number, by: (run: string) => string): string {
  let out = '';
  let start = -1;
  let i = 0;
  while (i < s.length) {
    const n = bad(i);
    if (n > 0) {
      if (start < 0) start = i;
      i += n;
      continue;
    }
    if (start >= 0) {
      out += by(s.slice(start, i));
      start = -1;
    }
    const width = isPair(s, i) ? 2 : 1;
    out += s.slice(i, i + width);
    i += width;
  }
  return start >= 0 ? out + by(s.slice(start)) : out;
}
