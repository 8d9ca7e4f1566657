// The install profile's rules, once: what a generated Debian image can be set up with. The server
// refuses a profile that breaks one (400 naming the field), the engine's `validate` reports it at its
// line, the provider's check fails on it: all three run this checker, so what one accepts the others do.
// It checks and normalises; keeping or hashing passwords is the server's (it alone holds the stored ones).
import { NOT_A_GROUP, STANDARD_GROUPS, SYSTEM_IDS, SYSTEM_USERS, TAKEN_GROUP, TAKEN_GROUPS, TAKEN_USER, USER_IDS } from './accounts';
import { RULES, SSH_KEY_RULE, SSH_KEY_TYPES, TIMEZONE_RULE, TIMEZONES } from './field-rules';
import { DEFAULT_DISK_MIB, MAX_DISK_MIB, MIN_DISK_MIB, PROFILE_LIMITS as L } from './limits';
import type { InstallProfile, OsGroup, OsUser, SshKeyRecord } from './resources';
import { hasControl, TAB_AND_NEWLINE } from './text-rules';

/** A broken rule: where (`users[0].name`, relative to the profile) and why (said after the field's name). */
export interface ProfileProblem {
  readonly path: string;
  readonly why: string;
}

declare const checked: unique symbol;
/** A profile every rule passed, normalised (trimmed keys, joined kernel words, ids as numbers' text). */
export type CheckedProfile = InstallProfile & { readonly [checked]: true };

export type ProfileCheck = { readonly profile: CheckedProfile; readonly problems: readonly [] } | { readonly problems: readonly ProfileProblem[] };

const NAME = /^[a-z_][a-z0-9_-]*$/;
/** A path with no `..`, no spaces or shell/sed/passwd metacharacters (it goes into /etc/passwd). */
const SAFE_PATH = /^\/(?:[A-Za-z0-9._+-]+\/?)*$/;
/** crypt(3) hashes libxcrypt on Debian 12 and 13 verify: sha512-crypt, sha256-crypt, yescrypt (checked in a trixie tree). */
const CRYPT = [
  /^\$6\$(?:rounds=\d{4,9}\$)?[./0-9A-Za-z]{1,16}\$[./0-9A-Za-z]{86}$/,
  /^\$5\$(?:rounds=\d{4,9}\$)?[./0-9A-Za-z]{1,16}\$[./0-9A-Za-z]{43}$/,
  /^\$y\$[./0-9A-Za-z]+\$[./0-9A-Za-z]{1,86}\$[./0-9A-Za-z]{43}$/,
];
/** What root may be given: the rest (a shell, an id) is the image's own. */
const ROOT_ONLY: readonly string[] = ['disablePasswordLogin', 'encrypted', 'password', 'sshKeys', 'name'];

const quote = (v: string, n: number): string => JSON.stringify(v.slice(0, n));

/** The largest disk a profile may ask for where the server allows `maxDiskMiB` (offline: the build's own bound). */
export const diskBound = (maxDiskMiB = MAX_DISK_MIB): number => Math.min(maxDiskMiB, MAX_DISK_MIB);

/** Checks every field of a profile; all problems, in field order, or the checked profile. */
export function checkProfile(p: InstallProfile, o: { maxDiskMiB?: number } = {}): ProfileCheck {
  const c = new Checker();
  const profile = c.profile(p, diskBound(o.maxDiskMiB));
  return c.problems.length ? { problems: c.problems } : { profile: profile as CheckedProfile, problems: [] };
}

class Checker {
  readonly problems: ProfileProblem[] = [];

  private fail(path: string, why: string): void {
    this.problems.push({ path, why });
  }

  profile(p: InstallProfile, maxDisk: number): InstallProfile {
    if (p.diskSize !== undefined && !(Number.isSafeInteger(p.diskSize) && p.diskSize >= MIN_DISK_MIB && p.diskSize <= maxDisk)) {
      this.fail('diskSize', `must be a whole number of MiB from ${MIN_DISK_MIB} to ${maxDisk} (the server's limit), got ${p.diskSize}`);
    }
    if (p.memorySize !== undefined && !(Number.isSafeInteger(p.memorySize) && p.memorySize >= 1)) this.fail('memorySize', 'must be a positive number of MiB');
    const room = Math.max(0, (p.diskSize ?? DEFAULT_DISK_MIB) - MIN_DISK_MIB);
    if (p.swapSize !== undefined && !(Number.isSafeInteger(p.swapSize) && p.swapSize >= 0 && p.swapSize <= room)) {
      this.fail('swapSize', `must be a whole number of MiB from 0 to ${room} (diskSize ${p.diskSize ?? DEFAULT_DISK_MIB} less the ${MIN_DISK_MIB} MiB the system needs), got ${p.swapSize}`);
    }
    if (p.timezone !== undefined && !TIMEZONES.has(p.timezone)) this.fail('timezone', `${quote(p.timezone, 64)} ${TIMEZONE_RULE}`);
    const kernelParameters = p.kernelParameters === undefined ? undefined : this.kernelParameters(p.kernelParameters, 'kernelParameters');
    const groups = p.groups === undefined ? undefined : this.groups(p.groups, 'groups');
    const known = new Set([...STANDARD_GROUPS, ...(groups ?? []).map((g) => g.name!)]);
    const rootUser = p.rootUser === undefined ? undefined : this.root(p.rootUser, 'rootUser');
    const users = p.users === undefined ? undefined : this.users(p.users, 'users', known);
    if (p.welcomeMsg !== undefined && (p.welcomeMsg.length > L.welcomeChars || hasControl(p.welcomeMsg, TAB_AND_NEWLINE))) {
      this.fail('welcomeMsg', `must be at most ${L.welcomeChars} characters of text (no control characters but newline and tab)`);
    }
    const { diskSize, memorySize, swapSize, timezone, keyboard, welcomeMsg } = p;
    return { diskSize, memorySize, swapSize, timezone, keyboard, kernelParameters, groups, rootUser, users, welcomeMsg };
  }

  /** The kernel command line: words of RULES.kernelWord, without `root=`. */
  private kernelParameters(text: string, path: string): string {
    if (text.length > L.kernelParameterChars) this.fail(path, `must be at most ${L.kernelParameterChars} characters`);
    const words = text.split(/[ \t]+/).filter((w) => w !== '');
    const bad = words.find((w) => !RULES.kernelWord.test(w));
    if (bad !== undefined) this.fail(path, `word ${quote(bad, 64)} may hold only ${RULES.kernelWord.says}`);
    if (words.some((w) => w.startsWith('root='))) this.fail(path, 'may not set root= (the image sets its own root device)');
    return words.join(' ');
  }

  private name(name: string | undefined, path: string): string | undefined {
    if (name === undefined || name === '') return void this.fail(`${path}.name`, 'is required');
    if (name.length > L.accountNameChars || !NAME.test(name)) {
      this.fail(`${path}.name`, `${quote(name, 40)} is not a valid Debian account name (^[a-z_][a-z0-9_-]*$, at most ${L.accountNameChars} characters)`);
    }
    return name;
  }

  /** A uid/gid given as the schema's string: a number in Debian's range for the account's kind, or undefined. */
  private id(v: string | undefined, system: boolean, path: string, taken: Set<number>, what: string): string | undefined {
    if (v === undefined) return undefined;
    const range = system ? SYSTEM_IDS : USER_IDS;
    const n = /^\d{1,6}$/.test(v) ? Number(v) : NaN;
    if (!(n >= range.min && n <= range.max)) {
      return void this.fail(path, `must be a number from ${range.min} to ${range.max} for ${system ? 'a system' : 'an ordinary'} account, got ${quote(v, 20)}`);
    }
    if (taken.has(n)) this.fail(path, `${n} is used by another ${what}`);
    taken.add(n);
    return String(n);
  }

  /** A name not yet declared in this list, nor one the image has. */
  private unique(name: string | undefined, path: string, seen: Set<string>, image: ReadonlySet<string>, taken: string): void {
    if (name === undefined) return;
    if (image.has(name)) this.fail(`${path}.name`, `${JSON.stringify(name)} ${taken}`);
    else if (seen.has(name)) this.fail(`${path}.name`, `${JSON.stringify(name)} is declared twice`);
    seen.add(name);
  }

  private groups(list: OsGroup[], at: string): OsGroup[] {
    if (list.length > L.groups) this.fail(at, `may hold at most ${L.groups} groups`);
    const names = new Set<string>();
    const ids = new Set<number>();
    return list.map((g, i) => {
      const path = `${at}[${i}]`;
      const name = this.name(g.name, path);
      this.unique(name, path, names, TAKEN_GROUPS, TAKEN_GROUP);
      const groupId = this.id(g.groupId, g.systemGroup ?? false, `${path}.groupId`, ids, 'group');
      return { name, groupId, systemGroup: g.systemGroup };
    });
  }

  private path(v: string | undefined, path: string): void {
    if (v === undefined) return;
    if (v.length > L.pathChars || !SAFE_PATH.test(v) || v.split('/').some((s) => s === '..' || s === '.') || v === '/') {
      this.fail(path, `${quote(v, 64)} must be an absolute path of letters, digits and . _ + - (no .., no spaces)`);
    }
  }

  /** One OpenSSH public key line: type, base64 blob that starts with the same type, optional comment. */
  private key(k: SshKeyRecord, path: string): SshKeyRecord {
    const line = (k.publicKey ?? '').trim();
    const m = /^(\S+) ([A-Za-z0-9+/]+={0,2})(?: ([^\r\n]{0,256}))?$/.exec(line);
    const type = m?.[1] ?? '';
    let ok = !!m && SSH_KEY_TYPES.has(type) && !hasControl(line, TAB_AND_NEWLINE);
    if (ok) {
      const blob = Buffer.from(m![2]!, 'base64');
      const len = blob.length >= 4 ? blob.readUInt32BE(0) : -1;
      ok = len === type.length && blob.subarray(4, 4 + len).toString('latin1') === type && blob.length > 4 + len;
    }
    if (!ok) this.fail(`${path}.publicKey`, SSH_KEY_RULE);
    if (k.name !== undefined && (k.name.length > L.sshKeyNameChars || hasControl(k.name))) this.fail(`${path}.name`, `must be at most ${L.sshKeyNameChars} characters on one line`);
    return { name: k.name, publicKey: line };
  }

  private keys(list: SshKeyRecord[] | undefined, path: string): SshKeyRecord[] | undefined {
    if (list === undefined) return undefined;
    if (list.length > L.sshKeysPerAccount) this.fail(path, `may hold at most ${L.sshKeysPerAccount} keys`);
    return list.map((k, i) => this.key(k, `${path}[${i}]`));
  }

  /** A password as sent: a crypt(3) hash when `encrypted`, else plain text the server hashes. */
  private password(u: OsUser, path: string): void {
    if (u.password === undefined || u.password === '') return;
    if (u.encrypted) {
      if (!CRYPT.some((r) => r.test(u.password!))) this.fail(`${path}.password`, 'must be a crypt(3) hash ($6$, $5$ or $y$) when encrypted is true');
    } else if (u.password.length > L.passwordChars || u.password.includes('\u0000')) {
      this.fail(`${path}.password`, `must be at most ${L.passwordChars} characters, without NUL`);
    }
  }

  private root(u: OsUser, path: string): OsUser {
    for (const k of Object.keys(u)) {
      if (!ROOT_ONLY.includes(k) && u[k as keyof OsUser] !== undefined) this.fail(`${path}.${k}`, 'does not apply to root (only password, encrypted, disablePasswordLogin and sshKeys do)');
    }
    if (u.name !== undefined && u.name !== 'root') this.fail(`${path}.name`, 'must be root when given');
    this.password(u, path);
    return { disablePasswordLogin: u.disablePasswordLogin, password: u.password, encrypted: u.encrypted, sshKeys: this.keys(u.sshKeys, `${path}.sshKeys`) };
  }

  private users(list: OsUser[], at: string, groups: ReadonlySet<string>): OsUser[] {
    if (list.length > L.users) this.fail(at, `may hold at most ${L.users} users`);
    const names = new Set<string>();
    const ids = new Set<number>();
    return list.map((u, i) => {
      const path = `${at}[${i}]`;
      const name = this.name(u.name, path);
      this.unique(name, path, names, SYSTEM_USERS, TAKEN_USER);
      const userId = this.id(u.userId, u.systemUser ?? false, `${path}.userId`, ids, 'user');
      if (u.fullName !== undefined && (u.fullName.length > L.fullNameChars || /[:,]/.test(u.fullName) || hasControl(u.fullName, '\t'))) {
        this.fail(`${path}.fullName`, `must be at most ${L.fullNameChars} characters without : , or line breaks (it goes into /etc/passwd)`);
      }
      if (u.primaryGroup !== undefined && !groups.has(u.primaryGroup)) this.fail(`${path}.primaryGroup`, `${quote(u.primaryGroup, 40)} ${NOT_A_GROUP}`);
      const secondary = (u.secondaryGroups ?? '').split(',').map((g) => g.trim()).filter((g) => g !== '');
      for (const g of secondary) if (!groups.has(g)) this.fail(`${path}.secondaryGroups`, `${quote(g, 40)} ${NOT_A_GROUP}`);
      this.password(u, path);
      if (u.disablePasswordLogin && u.password) this.fail(`${path}.disablePasswordLogin`, 'contradicts the password given (leave the password out to disable password login)');
      this.path(u.homeDir, `${path}.homeDir`);
      this.path(u.shell, `${path}.shell`);
      const { disablePasswordLogin, encrypted, fullName, homeDir, password, primaryGroup, shell, systemUser } = u;
      const sshKeys = this.keys(u.sshKeys, `${path}.sshKeys`);
      const secondaryGroups = secondary.length ? secondary.join(',') : undefined;
      return { disablePasswordLogin, encrypted, fullName, homeDir, name, password, primaryGroup, secondaryGroups, shell, sshKeys, systemUser, userId };
    });
  }
}
