// Formats and errors (wire contract §3, §5): encodes the request document in the client's format,
// sets Accept and Content-Type, decodes the answer, and turns an error status into ApiError (a
// `uforgeError` body) or HttpError (anything else, with a short redacted snippet — never a SyntaxError).
import type { Readable } from 'node:stream';
import { decodeBody, encode, formatOfContentType, MEDIA_TYPE, type Format } from '../codec/index';
import { DecodeError } from '../errors';
import { ApiError, HttpError } from './errors';
import { documents, rootAliases, type DocumentOf, type DocumentRoot } from '../model/resources';
import { maskSecrets, secretFieldNames, secretsIn } from '../model/redact';
import { dump, readBody, type Exchange, type Handler, type Reply, type WireRequest } from './wire';

const MAX_DOCUMENT_BYTES = 64 * 1024 * 1024;
const MAX_ERROR_BYTES = 64 * 1024;
const SNIPPET_CHARS = 200;

export function negotiate(format: Format, clientSecrets: readonly string[], next: Exchange): Handler {
  const media = MEDIA_TYPE[format];
  return async (call) => {
    const headers: Record<string, string> = { ...call.headers };
    // Binary answers still carry errors in the negotiated format (§5).
    headers.accept = call.expect === 'stream' ? `application/octet-stream, ${media};q=0.9` : media;
    const req: WireRequest = { method: call.method, target: call.target, headers, ...(call.signal ? { signal: call.signal } : {}) };
    const secrets = [...clientSecrets];
    if (call.document) {
      const root = call.document.root;
      const m = documents[(rootAliases[root]?.root ?? root) as DocumentRoot];
      secretsIn(m, call.document.value as Record<string, unknown>, secrets);
      req.body = encode(format, root as DocumentRoot, call.document.value as DocumentOf<DocumentRoot>);
      headers['content-type'] = `${media}; charset=utf-8`;
    } else if (call.raw) {
      req.body = call.raw;
      headers['content-type'] = 'application/octet-stream';
    }
    if (call.expect === 'stream') req.stream = true;
    const res = await next(req);
    const base = { status: res.status, headers: res.headers, ...(res.fromCache ? { fromCache: true } : {}) };
    if (res.status >= 300) throw await errorOf(res.status, res.headers, res.body, secrets);
    if (call.expect === 'stream') return { ...base, value: undefined, body: res.body } satisfies Reply;
    if (call.expect === null || res.status === 204) {
      dump(res.body);
      return { ...base, value: undefined };
    }
    const { data, truncated } = await readBody(res.body, MAX_DOCUMENT_BYTES);
    if (truncated) throw new DecodeError(`response body over ${MAX_DOCUMENT_BYTES} bytes`);
    const contentType = res.headers['content-type'] ?? media;
    return { ...base, value: decodeBody(contentType, data.toString('utf8'), call.expect).value };
  };
}

/** The typed error for an error status; reads at most 64 KiB of the body. */
export async function errorOf(
  status: number,
  headers: Record<string, string>,
  body: Readable,
  secrets: readonly string[],
): Promise<ApiError | HttpError> {
  let text = '';
  try {
    text = (await readBody(body, MAX_ERROR_BYTES)).data.toString('utf8');
  } catch {
    // the body could not be read: the status alone tells the story
  }
  const format = formatOfContentType(headers['content-type']);
  if (format && text) {
    try {
      const err = decodeBody(headers['content-type'], text, 'uforgeError').value;
      const msg = err.localizedErrorMsg;
      if (msg?.message !== undefined) err.localizedErrorMsg = { ...msg, message: maskSecrets(msg.message, secrets) };
      return new ApiError(status, err, headers);
    } catch (e) {
      if (!(e instanceof DecodeError)) throw e;
    }
  }
  return new HttpError(status, snippet(text, secrets), headers);
}

/** Names of the model's secret fields (`password`, `secretKey`), from the model itself (style example 4). */
const SECRET_FIELDS = [...secretFieldNames(Object.values(documents))];

/** A short, single-line, redacted excerpt of a body that is not a `uforgeError` (style example 5). */
export function snippet(text: string, secrets: readonly string[]): string {
  let s = maskSecrets(text, secrets);
  for (const f of SECRET_FIELDS) {
    s = s
      .replace(new RegExp(`(<${f}>)[^<]*(</${f}>)`, 'g'), '$1***$2')
      .replace(new RegExp(`("${f}"\\s*:\\s*)"(?:[^"\\\\]|\\\\.)*"`, 'g'), '$1"***"');
  }
  // eslint-disable-next-line no-control-regex -- control characters are what it looks for
  s = s.replace(/(signature=)[^&\s"'<]*/gi, '$1***').replace(/[\u0000-\u001f\u007f]+/g, ' ').replace(/\s+/g, ' ').trim();
  return s.length > SNIPPET_CHARS ? `${s.slice(0, SNIPPET_CHARS)}…` : s;
}


