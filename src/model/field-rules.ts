// Field rules shared by every reader of a field — the server's routes, the image build, the engine's
// declaration parser and the provider's checks — so that a value one accepts the others accept too.

/** Octal permissions of an installed file: `644`, `0644`, `4755`. */
export const RIGHTS_PATTERN = /^[0-7]{3,4}$/;

/** An absolute http(s) URL: the scheme, a host, then an optional path, query or fragment; no whitespace. */
export const HTTP_URL_PATTERN = /^https?:\/\/[^\s/?#]+([/?#]\S*)?$/i;

export function isHttpUrl(s: string): boolean {
  return HTTP_URL_PATTERN.test(s);
}

/** Time zone names an image can be set to: the IANA names Node knows, and UTC. */
export const TIMEZONES: ReadonlySet<string> = new Set([...Intl.supportedValuesOf('timeZone'), 'UTC', 'Etc/UTC']);
export const TIMEZONE_RULE = 'is not an IANA time zone name (e.g. Europe/Paris, Etc/UTC)';

/** The OpenSSH public key types an image accepts: the first word of a key line. */
export const SSH_KEY_TYPES: ReadonlySet<string> = new Set([
  'ssh-ed25519', 'ssh-rsa', 'ecdsa-sha2-nistp256', 'ecdsa-sha2-nistp384', 'ecdsa-sha2-nistp521',
  'sk-ssh-ed25519@openssh.com', 'sk-ecdsa-sha2-nistp256@openssh.com',
]);
export const SSH_KEY_RULE = `must be one OpenSSH public key line (${[...SSH_KEY_TYPES].slice(0, 3).join(', ')}, … + base64 key + optional comment)`;
