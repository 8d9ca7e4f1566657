// Field rules shared by every reader of a field — the server's routes, the image build, the engine's
// declaration parser and the provider's checks — so that a value one accepts the others accept too.

/** Octal permissions of an installed file: `644`, `0644`, `4755`. */
export const RIGHTS_PATTERN = /^[0-7]{3,4}$/;

/** An absolute http(s) URL: the scheme, a host, then an optional path, query or fragment; no whitespace. */
export const HTTP_URL_PATTERN = /^https?:\/\/[^\s/?#]+([/?#]\S*)?$/i;

export function isHttpUrl(s: string): boolean {
  return HTTP_URL_PATTERN.test(s);
}
