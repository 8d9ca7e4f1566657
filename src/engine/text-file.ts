// Reads a declaration (or credentials) file as text, refusing what cannot be one before any YAML
// parser sees it: more than MAX_TEXT_BYTES (read in bounded steps, so a pipe or a device cannot fill
// the memory), UTF-16, or binary data. A binary file would otherwise become thousands of YAML errors.
import { closeSync, openSync, readSync } from 'node:fs';
import { isUtf8 } from 'node:buffer';
import { errnoWords } from '../error-text';
import { messageOf } from '../errors';
import type { Position } from './problems';

/** Declarations are a few KiB; this leaves room for long package lists and comments. */
export const MAX_TEXT_BYTES = 1024 * 1024;

/** The text, or why there is none (words that follow the file's name) and where, when known. */
export type TextRead = { readonly text: string } | { readonly problem: string; readonly at?: Position };

export function readTextFile(file: string, maxBytes = MAX_TEXT_BYTES): TextRead {
  let buf: Buffer;
  try {
    buf = readAtMost(file, maxBytes + 1);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return { problem: (code && errnoWords(code)) ?? messageOf(e) };
  }
  if (buf.length > maxBytes) return { problem: `larger than ${maxBytes / 1048576} MiB: too large for a YAML or JSON declaration` };
  if ((buf[0] === 0xff && buf[1] === 0xfe) || (buf[0] === 0xfe && buf[1] === 0xff)) return { problem: 'UTF-16 text: save the file as UTF-8' };
  const text = buf.toString('utf8');
  // A NUL, or bytes that are not UTF-8 (decoded as U+FFFD): the first one is where the text ends.
  const nul = text.indexOf('\u0000');
  const bad = isUtf8(buf) ? -1 : text.indexOf('\uFFFD');
  const binary = nul < 0 ? bad : bad < 0 ? nul : Math.min(nul, bad);
  return binary < 0 ? { text } : { problem: 'binary data, not YAML or JSON text', at: positionIn(text, binary) };
}

function readAtMost(file: string, limit: number): Buffer {
  const fd = openSync(file, 'r');
  try {
    const buf = Buffer.alloc(limit);
    let n = 0;
    for (let got = -1; got !== 0 && n < limit; n += got) got = readSync(fd, buf, n, limit - n, null);
    return buf.subarray(0, n);
  } finally {
    closeSync(fd);
  }
}

/** 1-based line and column of a character offset, as the YAML parser counts them. */
function positionIn(text: string, offset: number): Position {
  const before = text.slice(0, offset);
  const nl = before.lastIndexOf('\n');
  return { line: before.split('\n').length, column: offset - nl };
}
