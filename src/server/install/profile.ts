// The install profile as the API accepts it (issue 9): every value checked here, once, wherever a
// profile is written (appliance create/update, image generation), so that the image build gets only
// values it can apply. Passwords leave this module only as crypt(3) hashes (`encrypted: true`).
// Schema fields the build cannot honour never get here: the codec refuses them (model `refused`).
import { MAX_DISK_MIB, MIN_DISK_MIB } from '../../imaging';
import { SSH_KEY_RULE, SSH_KEY_TYPES, TIMEZONE_RULE, TIMEZONES } from '../../model/field-rules';
import { redactRecord } from '../../model/redact';
import { installProfile, type InstallProfile, type OsGroup, type OsUser, type SshKeyRecord } from '../../model/resources';
import { badRequest } from '../service-error';
import { NOT_A_GROUP, STANDARD_GROUPS, SYSTEM_IDS, SYSTEM_USERS, TAKEN_GROUP, TAKEN_USER, USER_IDS } from './accounts';

/** Disk size of an image whose profile gives none (MiB): a Minimal Debian 12 with room for packages. */
export const DEFAULT_DISK_MIB = 2048;
/** Default `limits.maxDiskMiB` (`serve --max-disk-mib`). */
export const DEFAULT_MAX_DISK_MIB = 65536;

const MAX_USERS = 100;
const MAX_GROUPS = 100;
const MAX_KEYS = 32;
const MAX_WELCOME = 4096;
const MAX_KERNEL_PARAMS = 1024;
const MAX_PASSWORD = 1024;

const NAME = /^[a-z_][a-z0-9_-]*$/;
/** A path with no `..`, no spaces or shell/sed/passwd metacharacters (it goes into /etc/passwd). */
const SAFE_PATH = /^\/(?:[A-Za-z0-9._+-]+\/?)*$/;
/** A kernel command-line word safe inside grub.cfg: no quote, `;`, `$`, backslash, newline, `#`, braces. */
const KERNEL_WORD = /^[A-Za-z0-9_.,:=+/@%-]+$/;
/** crypt(3) hashes glibc/libxcrypt on Debian 12 verify: sha512-crypt, sha256-crypt, yescrypt. */
const CRYPT = [
  /^\$6\$(?:rounds=\d{4,9}\$)?[./0-9A-Za-z]{1,16}\$[./0-9A-Za-z]{86}$/,
  /^\$5\$(?:rounds=\d{4,9}\$)?[./0-9A-Za-z]{1,16}\$[./0-9A-Za-z]{43}$/,
  /^\$y\$[./0-9A-Za-z]+\$[./0-9A-Za-z]{1,86}\$[./0-9A-Za-z]{43}$/,
];
// eslint-disable-next-line no-control-regex -- the point is to find control characters
const CONTROL = /[\u0000-\u0008\u000B-\u001F\u007F]/;

export interface ProfileLimits {
  /** Largest disk a user may ask for, in MiB (`limits.maxDiskMiB`). */
  readonly maxDiskMiB: number;
}

const fail = (path: string, why: string): never => {
  throw badRequest(`${path} ${why}`);
};

/** The profile as responses show it: no password, not even its hash (`encrypted: true` says one is set). */
export function installProfileView(p: InstallProfile): InstallProfile {
  return redactRecord(installProfile, p);
}

/** sha512-crypt (`$6$`, 5000 rounds, 16-character random salt) of a password: unixcrypt, ESM only. */
async function sha512crypt(plain: string): Promise<string> {
  const { encrypt } = await import('unixcrypt');
  return encrypt(plain);
}

/**
 * The install profile to store: checked (400 naming the field), normalised, passwords hashed.
 * `previous` is the stored profile it replaces: an account sent without `password` keeps its stored
 * hash (fields left out keep their value, spec rule 4d); an empty `password` removes it.
 */
export async function checkInstallProfile(p: InstallProfile | undefined, limits: ProfileLimits, previous?: InstallProfile): Promise<InstallProfile | undefined> {
  if (!p) return undefined;
  const at = 'installProfile';
  const out: InstallProfile = {};
  const maxDisk = Math.min(limits.maxDiskMiB, MAX_DISK_MIB);
  if (p.diskSize !== undefined) {
    if (!Number.isSafeInteger(p.diskSize) || p.diskSize < MIN_DISK_MIB || p.diskSize > maxDisk) {
      fail(`${at}.diskSize`, `must be a whole number of MiB from ${MIN_DISK_MIB} to ${maxDisk} (the server's limit), got ${p.diskSize}`);
    }
    out.diskSize = p.diskSize;
  }
  if (p.memorySize !== undefined) {
    if (!Number.isSafeInteger(p.memorySize) || p.memorySize < 1) fail(`${at}.memorySize`, 'must be a positive number of MiB');
    out.memorySize = p.memorySize;
  }
  if (p.swapSize !== undefined) {
    const disk = p.diskSize ?? DEFAULT_DISK_MIB;
    if (!Number.isSafeInteger(p.swapSize) || p.swapSize < 0 || p.swapSize > disk - MIN_DISK_MIB) {
      fail(`${at}.swapSize`, `must be a whole number of MiB from 0 to ${Math.max(0, disk - MIN_DISK_MIB)} (diskSize ${disk} less the ${MIN_DISK_MIB} MiB the system needs), got ${p.swapSize}`);
    }
    out.swapSize = p.swapSize;
  }
  if (p.timezone !== undefined) {
    if (!TIMEZONES.has(p.timezone)) fail(`${at}.timezone`, `${JSON.stringify(p.timezone.slice(0, 64))} ${TIMEZONE_RULE}`);
    out.timezone = p.timezone;
  }
  if (p.keyboard !== undefined) out.keyboard = p.keyboard; // the codec checked it against the model's table
  if (p.kernelParameters !== undefined) out.kernelParameters = kernelParameters(p.kernelParameters, `${at}.kernelParameters`);
  const groups = checkGroups(p.groups ?? [], `${at}.groups`);
  if (p.groups !== undefined) out.groups = groups;
  const known = new Set([...STANDARD_GROUPS, ...groups.map((g) => g.name!)]);
  if (p.rootUser !== undefined) out.rootUser = await checkRoot(p.rootUser, `${at}.rootUser`, previous?.rootUser);
  if (p.users !== undefined) out.users = await checkUsers(p.users, `${at}.users`, known, previous?.users ?? []);
  if (p.welcomeMsg !== undefined) {
    if (p.welcomeMsg.length > MAX_WELCOME || CONTROL.test(p.welcomeMsg)) fail(`${at}.welcomeMsg`, `must be at most ${MAX_WELCOME} characters of text (no control characters but newline and tab)`);
    out.welcomeMsg = p.welcomeMsg;
  }
  return out;
}

function kernelParameters(text: string, path: string): string {
  if (text.length > MAX_KERNEL_PARAMS) fail(path, `must be at most ${MAX_KERNEL_PARAMS} characters`);
  const words = text.split(/[ \t]+/).filter((w) => w !== '');
  for (const w of words) {
    if (!KERNEL_WORD.test(w)) fail(path, `word ${JSON.stringify(w.slice(0, 64))} may hold only letters, digits and _ . , : = + / @ % - (it goes into grub.cfg)`);
    if (/^root=/.test(w)) fail(path, 'may not set root= (the image sets its own root device)');
  }
  return words.join(' ');
}

function checkName(name: string | undefined, path: string): string {
  if (name === undefined || name === '') return fail(`${path}.name`, 'is required');
  if (name.length > 32 || !NAME.test(name)) fail(`${path}.name`, `${JSON.stringify(name.slice(0, 40))} is not a valid Debian account name (^[a-z_][a-z0-9_-]*$, at most 32 characters)`);
  return name;
}

/** A uid/gid given as the schema's string: a number in Debian's range for the account's kind. */
function checkId(v: string | undefined, system: boolean, path: string): number | undefined {
  if (v === undefined) return undefined;
  const range = system ? SYSTEM_IDS : USER_IDS;
  const n = /^\d{1,6}$/.test(v) ? Number(v) : NaN;
  if (!(n >= range.min && n <= range.max)) fail(path, `must be a number from ${range.min} to ${range.max} for ${system ? 'a system' : 'an ordinary'} account, got ${JSON.stringify(v.slice(0, 20))}`);
  return n;
}

function checkGroups(list: OsGroup[], at: string): OsGroup[] {
  if (list.length > MAX_GROUPS) fail(at, `may hold at most ${MAX_GROUPS} groups`);
  const names = new Set<string>();
  const ids = new Set<number>();
  return list.map((g, i) => {
    const path = `${at}[${i}]`;
    const name = checkName(g.name, path);
    if (STANDARD_GROUPS.has(name)) fail(`${path}.name`, `${JSON.stringify(name)} ${TAKEN_GROUP}`);
    if (names.has(name)) fail(`${path}.name`, `${JSON.stringify(name)} is declared twice`);
    names.add(name);
    const system = g.systemGroup ?? false;
    const gid = checkId(g.groupId, system, `${path}.groupId`);
    if (gid !== undefined) {
      if (ids.has(gid)) fail(`${path}.groupId`, `${gid} is used by another group`);
      ids.add(gid);
    }
    return { name, ...(gid !== undefined ? { groupId: String(gid) } : {}), ...(g.systemGroup !== undefined ? { systemGroup: g.systemGroup } : {}) };
  });
}

function checkPath(v: string | undefined, path: string): string | undefined {
  if (v === undefined) return undefined;
  if (v.length > 255 || !SAFE_PATH.test(v) || v.split('/').some((s) => s === '..' || s === '.') || v === '/') {
    fail(path, `${JSON.stringify(v.slice(0, 64))} must be an absolute path of letters, digits and . _ + - (no .., no spaces)`);
  }
  return v;
}

/** One OpenSSH public key line: type, base64 blob that starts with the same type, optional comment. */
function checkKey(k: SshKeyRecord, path: string): SshKeyRecord {
  const line = k.publicKey ?? '';
  const m = /^(\S+) ([A-Za-z0-9+/]+={0,2})(?: ([^\r\n]{0,256}))?$/.exec(line.trim());
  const type = m?.[1] ?? '';
  let ok = !!m && SSH_KEY_TYPES.has(type) && !CONTROL.test(line.trim());
  if (ok) {
    const blob = Buffer.from(m![2]!, 'base64');
    const len = blob.length >= 4 ? blob.readUInt32BE(0) : -1;
    ok = len === type.length && blob.subarray(4, 4 + len).toString('latin1') === type && blob.length > 4 + len;
  }
  if (!ok) fail(`${path}.publicKey`, SSH_KEY_RULE);
  // eslint-disable-next-line no-control-regex -- control characters are what it looks for
  if (k.name !== undefined && (k.name.length > 128 || /[\u0000-\u001F\u007F]/.test(k.name))) fail(`${path}.name`, 'must be at most 128 characters on one line');
  return { ...(k.name !== undefined ? { name: k.name } : {}), publicKey: line.trim() };
}

function checkKeys(list: SshKeyRecord[] | undefined, path: string): SshKeyRecord[] | undefined {
  if (list === undefined) return undefined;
  if (list.length > MAX_KEYS) fail(path, `may hold at most ${MAX_KEYS} keys`);
  return list.map((k, i) => checkKey(k, `${path}[${i}]`));
}

/** The stored form of an account's password: a hash with `encrypted: true`, or nothing. */
async function checkPassword(u: OsUser, path: string, stored: OsUser | undefined): Promise<Pick<OsUser, 'password' | 'encrypted'>> {
  if (u.password === undefined) {
    if (u.encrypted && stored?.password === undefined) fail(`${path}.password`, 'is required when encrypted is true');
    return stored?.password !== undefined ? { password: stored.password, encrypted: true } : {};
  }
  if (u.password === '') return {};
  if (u.encrypted) {
    if (!CRYPT.some((r) => r.test(u.password!))) fail(`${path}.password`, 'must be a crypt(3) hash ($6$, $5$ or $y$) when encrypted is true');
    return { password: u.password, encrypted: true };
  }
  if (u.password.length > MAX_PASSWORD || u.password.includes('\u0000')) fail(`${path}.password`, `must be at most ${MAX_PASSWORD} characters, without NUL`);
  return { password: await sha512crypt(u.password), encrypted: true };
}

const ROOT_ONLY = ['disablePasswordLogin', 'encrypted', 'password', 'sshKeys', 'name'] as const;

async function checkRoot(u: OsUser, path: string, stored: OsUser | undefined): Promise<OsUser> {
  for (const k of Object.keys(u)) {
    if (!(ROOT_ONLY as readonly string[]).includes(k) && u[k as keyof OsUser] !== undefined) fail(`${path}.${k}`, 'does not apply to root (only password, encrypted, disablePasswordLogin and sshKeys do)');
  }
  if (u.name !== undefined && u.name !== 'root') fail(`${path}.name`, 'must be root when given');
  const keys = checkKeys(u.sshKeys, `${path}.sshKeys`);
  return {
    ...(u.disablePasswordLogin !== undefined ? { disablePasswordLogin: u.disablePasswordLogin } : {}),
    ...(await checkPassword(u, path, stored)),
    ...(keys ? { sshKeys: keys } : {}),
  };
}

async function checkUsers(list: OsUser[], at: string, groups: ReadonlySet<string>, stored: OsUser[]): Promise<OsUser[]> {
  if (list.length > MAX_USERS) fail(at, `may hold at most ${MAX_USERS} users`);
  const names = new Set<string>();
  const ids = new Set<number>();
  const out: OsUser[] = [];
  for (const [i, u] of list.entries()) {
    const path = `${at}[${i}]`;
    const name = checkName(u.name, path);
    if (SYSTEM_USERS.has(name)) fail(`${path}.name`, `${JSON.stringify(name)} ${TAKEN_USER}`);
    if (names.has(name)) fail(`${path}.name`, `${JSON.stringify(name)} is declared twice`);
    names.add(name);
    const uid = checkId(u.userId, u.systemUser ?? false, `${path}.userId`);
    if (uid !== undefined) {
      if (ids.has(uid)) fail(`${path}.userId`, `${uid} is used by another user`);
      ids.add(uid);
    }
    if (u.fullName !== undefined && (u.fullName.length > 256 || /[:,\n\r]/.test(u.fullName) || CONTROL.test(u.fullName))) {
      fail(`${path}.fullName`, 'must be at most 256 characters without : , or line breaks (it goes into /etc/passwd)');
    }
    if (u.primaryGroup !== undefined && !groups.has(u.primaryGroup)) fail(`${path}.primaryGroup`, `${JSON.stringify(u.primaryGroup.slice(0, 40))} ${NOT_A_GROUP}`);
    const secondary = (u.secondaryGroups ?? '').split(',').map((g) => g.trim()).filter((g) => g !== '');
    for (const g of secondary) if (!groups.has(g)) fail(`${path}.secondaryGroups`, `${JSON.stringify(g.slice(0, 40))} ${NOT_A_GROUP}`);
    // Password login disabled and no password sent: the stored hash goes too.
    const keep = u.disablePasswordLogin && u.password === undefined ? undefined : stored.find((s) => s.name === name);
    const password = await checkPassword(u, path, keep);
    if (u.disablePasswordLogin && password.password !== undefined) fail(`${path}.disablePasswordLogin`, 'contradicts the password given (leave the password out to disable password login)');
    const keys = checkKeys(u.sshKeys, `${path}.sshKeys`);
    const homeDir = checkPath(u.homeDir, `${path}.homeDir`);
    const shell = checkPath(u.shell, `${path}.shell`);
    out.push({
      ...(u.disablePasswordLogin !== undefined ? { disablePasswordLogin: u.disablePasswordLogin } : {}),
      ...(password.encrypted ? { encrypted: true } : {}),
      ...(u.fullName !== undefined ? { fullName: u.fullName } : {}),
      ...(homeDir !== undefined ? { homeDir } : {}),
      name,
      ...(password.password !== undefined ? { password: password.password } : {}),
      ...(u.primaryGroup !== undefined ? { primaryGroup: u.primaryGroup } : {}),
      ...(secondary.length ? { secondaryGroups: secondary.join(',') } : {}),
      ...(shell !== undefined ? { shell } : {}),
      ...(keys ? { sshKeys: keys } : {}),
      ...(u.systemUser !== undefined ? { systemUser: u.systemUser } : {}),
      ...(uid !== undefined ? { userId: String(uid) } : {}),
    });
  }
  return out;
}
