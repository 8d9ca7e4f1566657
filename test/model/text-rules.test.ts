// The one rule for control characters and characters XML cannot carry, over code units.
import { describe, expect, it } from 'vitest';
import { controlAt, escapeChars, hasControl, hasNonXmlChar, replaceControls, replaceNonXml, TAB_AND_NEWLINE } from '../../src/model/text-rules';

const C0 = Array.from({ length: 32 }, (_, i) => String.fromCharCode(i));

describe('control characters', () => {
  it.each([...C0, '\u007f'])('%j is a control character', (c) => {
    expect(hasControl(`a${c}b`)).toBe(true);
    expect(controlAt(`ab${c}`)).toBe(2);
  });
  it.each(['plain text', 'é日本😀', '\u0080', '\u00a0', ''])('%j holds none', (s) => expect(hasControl(s)).toBe(false));
  it('keeps the allowed ones', () => {
    expect(hasControl('line\nnext\tcol', TAB_AND_NEWLINE)).toBe(false);
    expect(hasControl('line\r\nnext', TAB_AND_NEWLINE)).toBe(true);
  });
  it('replaces each run once, keeping the allowed ones and surrogate pairs', () => {
    expect(replaceControls('a\u0001\u0002b\tc\u007f😀', () => ' ', '\t')).toBe('a b\tc 😀');
    expect(replaceControls('\u0000', () => '')).toBe('');
  });
});

describe('characters XML cannot carry', () => {
  it.each([...C0.filter((c) => !'\t\n\r'.includes(c)), '\ufffe', '\uffff', '\ud800', '\udc00', 'x\ud800y'])('%j is refused', (s) =>
    expect(hasNonXmlChar(s)).toBe(true));
  it.each(['\t\n\r', '😀', 'a\u007fb', '&<>', '\ud83d\ude00'])('%j is carried', (s) => expect(hasNonXmlChar(s)).toBe(false));
  it('escapes each refused character for a message', () => {
    expect(replaceNonXml('a\u0001\u0002b😀\ud800', escapeChars)).toBe('a\\u0001\\u0002b😀\\ud800');
  });
});
