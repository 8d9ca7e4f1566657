// Field rules shared by every reader of a field — the server's routes, the image build, the engine's
// declaration parser and the provider's checks — so that a value one accepts the others accept too.
// Each rule says what a good value is once ("<field> must be <says>"); every side words its message
// from it.
import { PROFILE_LIMITS } from './limits';
import { hasControl } from './text-rules';

/** A rule a text value follows: what a good one is, after "<field> must be", and the test. */
export interface Rule {
  readonly says: string;
  readonly test: (v: string) => boolean;
  /** The rule as a pattern, where one says it all (an editor's JSON Schema shows it). */
  readonly pattern?: RegExp;
}

const rule = (says: string, test: (v: string) => boolean): Rule => ({ says, test });
/** A rule a pattern says whole. */
export const matching = (pattern: RegExp, says: string): Rule => ({ says, test: (v) => pattern.test(v), pattern });

/** "<field> must be <says>" where `v` breaks the rule; undefined where it follows it. */
export const broken = (field: string, r: Rule, v: string): string | undefined => (r.test(v) ? undefined : `${field} must be ${r.says}`);

/** Octal permissions of an installed file: `644`, `0644`, `4755`. */
export const RIGHTS_PATTERN = /^[0-7]{3,4}$/;

/** An absolute http(s) URL: the scheme, a host, then an optional path, query or fragment; no whitespace. */
export const HTTP_URL_PATTERN = /^https?:\/\/[^\s/?#]+([/?#]\S*)?$/i;

export function isHttpUrl(s: string): boolean {
  return HTTP_URL_PATTERN.test(s);
}

/** An account name as `chown` takes it (the image resolves it in its own /etc/passwd and /etc/group). */
const CHOWN_NAME = '[A-Za-z_][A-Za-z0-9_.-]{0,31}';
/** A kernel command-line word safe inside grub.cfg: no quote, `;`, `$`, backslash, newline, `#`, braces. */
const KERNEL_WORD_PATTERN = /^[A-Za-z0-9_.,:=+/@%-]+$/;

/** A software file's fields and a kernel command line, as the service, the image build, the engine and the provider check them. */
export const RULES = {
  rights: matching(RIGHTS_PATTERN, 'octal permissions such as 0644 or 755'),
  /** The owner, with the group after a colon or, left out, the owner's primary group. */
  ownerGroup: matching(new RegExp(`^${CHOWN_NAME}(:${CHOWN_NAME})?$`), 'owner or owner:group (account names, e.g. root or www-data:adm)'),
  installLocation: rule('an absolute directory without "..", backslashes or control characters', (v) =>
    v.startsWith('/') && !v.split('/').includes('..') && !v.includes('\\') && !hasControl(v)),
  /** What an uploaded file is called: it becomes one name in a folder of the image. */
  fileName: rule(`a plain file name (no / or \\, not . or .., no control characters, at most ${PROFILE_LIMITS.fileNameBytes} bytes)`, (v) =>
    v !== '' && v !== '.' && v !== '..' && !v.includes('/') && !v.includes('\\') && !hasControl(v) && Buffer.byteLength(v) <= PROFILE_LIMITS.fileNameBytes),
  httpUrl: matching(HTTP_URL_PATTERN, 'an http(s) URL'),
  kernelWord: matching(KERNEL_WORD_PATTERN, 'letters, digits and _ . , : = + / @ % - only (it goes into grub.cfg)'),
} as const satisfies Readonly<Record<string, Rule>>;

/** Time zone names an image can be set to: the IANA names Node knows, and UTC. */
export const TIMEZONES: ReadonlySet<string> = new Set([...Intl.supportedValuesOf('timeZone'), 'UTC', 'Etc/UTC']);
export const TIMEZONE_RULE = 'is not an IANA time zone name (e.g. Europe/Paris, Etc/UTC)';

/** The OpenSSH public key types an image accepts: the first word of a key line. */
export const SSH_KEY_TYPES: ReadonlySet<string> = new Set([
  'ssh-ed25519', 'ssh-rsa', 'ecdsa-sha2-nistp256', 'ecdsa-sha2-nistp384', 'ecdsa-sha2-nistp521',
  'sk-ssh-ed25519@openssh.com', 'sk-ecdsa-sha2-nistp256@openssh.com',
]);
export const SSH_KEY_RULE = `must be one OpenSSH public key line (${[...SSH_KEY_TYPES].slice(0, 3).join(', ')}, … + base64 key + optional comment)`;
