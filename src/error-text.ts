// Words for what users meet in error messages: Node's system error codes (ENOENT, EISDIR, …) said
// plainly, and text echoed from their input cut to a readable length, so that a message stays one
// short line whatever file or flag value it quotes.
import { getSystemErrorMap } from 'node:util';

/** The codes users meet most, in words; any other code gets libuv's words (util.getSystemErrorMap). */
const ERRNO_WORDS: Readonly<Record<string, string>> = {
  ENOENT: 'no such file or folder',
  EISDIR: 'is a folder',
  ENOTDIR: 'a part of the path is not a folder',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EEXIST: 'already exists',
  ENOTEMPTY: 'folder not empty',
  ELOOP: 'too many levels of symbolic links',
  ENAMETOOLONG: 'name too long',
  ENOSPC: 'no space left on the device',
  EROFS: 'read-only file system',
  EMFILE: 'too many open files',
  ENFILE: 'too many open files',
  EBUSY: 'busy',
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ETIMEDOUT: 'timed out',
  ENOTFOUND: 'host name not found',
  EAI_AGAIN: 'host name lookup failed for now',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  EPIPE: 'connection closed',
  EADDRINUSE: 'address already in use',
  EADDRNOTAVAIL: 'address not available here',
};

let libuvWords: Map<string, string> | undefined;

/** `ENOENT` → "no such file or folder"; undefined when `code` is not a system error code. */
export function errnoWords(code: string): string | undefined {
  if (Object.prototype.hasOwnProperty.call(ERRNO_WORDS, code)) return ERRNO_WORDS[code];
  libuvWords ??= new Map([...getSystemErrorMap().values()].map(([name, words]) => [name, words]));
  return libuvWords.get(code);
}

interface SystemErrorFields {
  readonly code?: unknown;
  readonly path?: unknown;
  readonly address?: unknown;
  readonly port?: unknown;
  readonly hostname?: unknown;
  readonly cause?: unknown;
}

/**
 * A Node system error (fs, net, dns) in words: `PATH: no such file or folder`, `connection refused
 * (127.0.0.1:9)`; with `causes`, the first one among `e`'s causes too; undefined when there is none.
 */
export function systemErrorText(e: unknown, o: { causes?: boolean } = {}): string | undefined {
  for (let cur = e, depth = 0; typeof cur === 'object' && cur !== null && depth < (o.causes ? 5 : 1); depth++) {
    const f = cur as SystemErrorFields;
    const words = typeof f.code === 'string' ? errnoWords(f.code) : undefined;
    if (words) {
      if (typeof f.path === 'string') return `${f.path}: ${words}`;
      const host = typeof f.hostname === 'string' ? f.hostname : typeof f.address === 'string' ? f.address : undefined;
      return host ? `${words} (${host}${typeof f.port === 'number' ? `:${f.port}` : ''})` : words;
    }
    // undici reports a failed connection to each address of a name as one AggregateError.
    cur = cur instanceof AggregateError && cur.errors.length ? cur.errors[0] : f.cause;
  }
  return undefined;
}

/** How much of the user's text a message quotes. */
export const ECHO_CHARS = 100;

/**
 * Text from the user's input as a message quotes it: in double quotes, control characters escaped (JSON
 * string syntax), cut to about ECHO_CHARS characters with an ellipsis.
 */
export function echo(text: string, max = ECHO_CHARS): string {
  if (text.length <= max) return JSON.stringify(text);
  // Not between the two halves of a surrogate pair.
  const end = /[\uD800-\uDBFF]/.test(text.charAt(max - 2)) ? max - 2 : max - 1;
  return JSON.stringify(`${text.slice(0, end)}…`);
}
