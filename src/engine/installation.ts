// `stack.installation` (the platform tool's field names) read into the appliance's install profile.
// The parser checks shapes with file/line/column; `validate` also runs the model's checker of the
// profile (model/install-profile.ts, the server's own) and reports each problem at its value's line.
// Passwords never reach a plan or a message: the service only shows `encrypted: true`, so the engine
// compares them through a scrypt fingerprint kept in the tag.
import { scrypt, scryptSync } from 'node:crypto';
import { isSeq } from 'yaml';
import { checkProfile, type ProfileProblem } from '../model/install-profile';
import { present } from '../model/present';
import { redactRecord } from '../model/redact';
import { installProfile, type InstallProfile, type OsGroup, type OsUser } from '../model/resources';
import { INSTALLATION, keyNames, OS_GROUP, OS_USER, ROOT_USER, SSH_KEY } from './declaration-format';
import type { Position } from './problems';
import { notIn, VOCABULARIES } from './vocabularies';
import type { MapView, YamlReader } from './yaml-reader';

export interface SshKeyDecl {
  readonly name?: string | undefined;
  readonly publicKey: string;
}

export interface OsUserDecl {
  readonly name: string;
  readonly fullName?: string | undefined;
  readonly userId?: number | undefined;
  readonly primaryGroup?: string | undefined;
  readonly secondaryGroups?: readonly string[] | undefined;
  readonly homeDir?: string | undefined;
  readonly shell?: string | undefined;
  readonly systemUser?: boolean | undefined;
  readonly password?: string | undefined;
  readonly disablePasswordLogin?: boolean | undefined;
  readonly sshKeys?: readonly SshKeyDecl[] | undefined;
}

export interface OsGroupDecl {
  readonly name: string;
  readonly groupId?: number | undefined;
  readonly systemGroup?: boolean | undefined;
}

/**
 * Appliance-level install settings (`stack.installation`, and the provider's `installation` input), sizes
 * in MiB: the declaration's names for the model's install profile (installProfileOf turns one into the other).
 */
export interface InstallationDecl {
  readonly diskSize?: number | undefined;
  readonly swapSize?: number | undefined;
  readonly memorySize?: number | undefined;
  readonly timezone?: string | undefined;
  readonly keyboard?: string | undefined;
  /** Kernel command-line words, space separated. */
  readonly kernelParams?: string | undefined;
  readonly rootUser?: {
    readonly password?: string | undefined;
    readonly disablePasswordLogin?: boolean | undefined;
    readonly sshKeys?: readonly SshKeyDecl[] | undefined;
  } | undefined;
  readonly users?: readonly OsUserDecl[] | undefined;
  readonly groups?: readonly OsGroupDecl[] | undefined;
  readonly welcomeMessage?: string | undefined;
}

/** The same section as the Pulumi provider's `installation` input takes it. */
export type InstallationInput = InstallationDecl;

export const INSTALL_KEYS = keyNames(INSTALLATION);
export const ROOT_KEYS = keyNames(ROOT_USER);
export const USER_KEYS = keyNames(OS_USER);
export const GROUP_KEYS = keyNames(OS_GROUP);
export const KEY_KEYS = keyNames(SSH_KEY);

/** The declaration's names of the profile's fields where they differ (`kernelParameters` is `kernelParams`). */
const DECLARED_AS: Readonly<Record<string, string>> = { kernelParameters: 'kernelParams', welcomeMsg: 'welcomeMessage' };

/**
 * Where each value of the section was written, by its path (`users[0].name`; a map's own path gives its
 * start), so that a problem the model's checker finds is reported there.
 */
class Places {
  private readonly at = new Map<string, Position>();
  add(path: string, m: Pick<MapView, 'at' | 'keys' | 'valueAt'>): void {
    this.at.set(path, m.at);
    for (const k of m.keys()) this.at.set(`${path}${path ? '.' : ''}${k}`, m.valueAt(k));
  }
  /** The place of a path, or of the nearest map holding it. */
  of(path: string, fallback: Position): Position {
    for (let p = path; p !== ''; p = p.replace(/(?:\.[^.[]*|\[\d+\])$/, '')) {
      const found = this.at.get(p);
      if (found) return found;
    }
    return fallback;
  }
}

/** `sshKeys` of root or a user (at `path` in the profile): the items read, or undefined where the key is absent. */
function readKeys(r: YamlReader, m: MapView<typeof ROOT_USER> | MapView<typeof OS_USER>, what: string, places: Places, path: string): SshKeyDecl[] | undefined {
  if (!m.has('sshKeys')) return undefined;
  const out: SshKeyDecl[] = [];
  for (const item of (m as MapView<typeof ROOT_USER>).seq('sshKeys')) {
    const k = r.map(item, `${what}.sshKeys[]`, SSH_KEY, m.keyAt('sshKeys'));
    const publicKey = k?.str('publicKey');
    if (!k || !publicKey) continue;
    places.add(`${path}.sshKeys[${out.length}]`, k);
    out.push({ name: k.str('name'), publicKey: publicKey.trim() });
  }
  return out;
}

/** Comma-separated text (the service's form) or a YAML list. */
function readGroupList(r: YamlReader, m: MapView<typeof OS_USER>, what: string): string[] | undefined {
  if (!m.has('secondaryGroups')) return undefined;
  const parts = isSeq(m.node('secondaryGroups'))
    ? m.seq('secondaryGroups').map((n) => r.scalarText(n, `${what}.secondaryGroups[]`, m.keyAt('secondaryGroups')) ?? '')
    : (m.str('secondaryGroups') ?? '').split(',');
  return parts.map((g) => g.trim()).filter((g) => g !== '');
}

export function readInstallation(r: YamlReader, m: MapView<typeof INSTALLATION> | undefined): InstallationDecl {
  if (!m) return {};
  const what = 'stack.installation';
  const places = new Places();
  places.add('', m);
  // Passwords are secrets (the shapes' model: osUser.password), masked in every output.
  const root = m.has('rootUser') ? m.map('rootUser') : undefined;
  if (root) places.add('rootUser', root);
  const users: OsUserDecl[] = [];
  const seenUsers = new Set<string>();
  for (const item of m.seq('users')) {
    const u = r.map(item, `${what}.users[]`, OS_USER, m.keyAt('users'));
    const name = u?.str('name');
    if (!u || !name) continue;
    if (seenUsers.has(name)) r.problems.add(u.valueAt('name'), `user "${name}" is declared twice`);
    seenUsers.add(name);
    const path = `users[${users.length}]`;
    places.add(path, u);
    users.push({
      name,
      fullName: u.str('fullName'),
      userId: u.int('userId'),
      primaryGroup: u.str('primaryGroup'),
      secondaryGroups: readGroupList(r, u, `${what}.users[]`),
      homeDir: u.str('homeDir'),
      shell: u.str('shell'),
      systemUser: u.bool('systemUser'),
      password: u.str('password'),
      disablePasswordLogin: u.bool('disablePasswordLogin'),
      sshKeys: readKeys(r, u, `${what}.users[]`, places, path),
    });
  }
  const groups: OsGroupDecl[] = [];
  const seenGroups = new Set<string>();
  for (const item of m.seq('groups')) {
    const g = r.map(item, `${what}.groups[]`, OS_GROUP, m.keyAt('groups'));
    const name = g?.str('name');
    if (!g || !name) continue;
    if (seenGroups.has(name)) r.problems.add(g.valueAt('name'), `group "${name}" is declared twice`);
    seenGroups.add(name);
    places.add(`groups[${groups.length}]`, g);
    groups.push({ name, groupId: g.int('groupId'), systemGroup: g.bool('systemGroup') });
  }
  const keyboard = m.str('keyboard');
  if (keyboard !== undefined) r.vocabulary(m.valueAt('keyboard'), () => notIn(`${what}.keyboard`, keyboard, VOCABULARIES.keyboard));
  const decl: InstallationDecl = {
    diskSize: m.int('diskSize'),
    swapSize: m.int('swapSize'),
    memorySize: m.int('memorySize'),
    timezone: m.str('timezone'),
    keyboard,
    kernelParams: m.str('kernelParams')?.split(/\s+/).filter((w) => w !== '').join(' '),
    rootUser: root && { password: root.str('password'), disablePasswordLogin: root.bool('disablePasswordLogin'), sshKeys: readKeys(r, root, `${what}.rootUser`, places, 'rootUser') },
    users: m.has('users') ? users : undefined,
    groups: m.has('groups') ? groups : undefined,
    welcomeMessage: m.str('welcomeMessage'),
  };
  // The service's rules (`validate`): each problem once, at its value, unless the value is already reported.
  const reported = new Set(r.problems.items.map((p) => `${p.line}:${p.column}`));
  for (const p of installationProblems(decl)) {
    const at = places.of(p.path, m.at);
    if (!reported.has(`${at.line}:${at.column}`)) r.vocabulary(at, () => `${what}.${p.path.replace(/\[\d+\]/g, '[]')} ${p.why}`);
  }
  return decl;
}

/**
 * What the model's checker of the install profile (the server's) finds in a declared installation, at
 * paths in the declaration's names (`users[0].name`, `kernelParams`). A keyboard is left to its vocabulary.
 */
export function installationProblems(i: InstallationInput): ProfileProblem[] {
  const profile = installProfileOf(i, true) ?? {};
  return checkProfile({ ...profile, keyboard: undefined }).problems.map((p) => ({ ...p, path: p.path.replace(/^[a-zA-Z]+/, (k) => DECLARED_AS[k] ?? k) }));
}

const keysOf = (keys: readonly SshKeyDecl[] | undefined) => keys?.map((k) => ({ ...k }));

function userOf(u: OsUserDecl, withPasswords: boolean): OsUser {
  return {
    disablePasswordLogin: u.disablePasswordLogin,
    fullName: u.fullName,
    homeDir: u.homeDir,
    name: u.name,
    password: withPasswords ? (u.password ?? '') : undefined,
    primaryGroup: u.primaryGroup,
    secondaryGroups: u.secondaryGroups?.length ? u.secondaryGroups.join(',') : undefined,
    shell: u.shell,
    sshKeys: keysOf(u.sshKeys),
    systemUser: u.systemUser,
    userId: u.userId === undefined ? undefined : String(u.userId),
  };
}

const groupOf = (g: OsGroupDecl): OsGroup => ({ groupId: g.groupId === undefined ? undefined : String(g.groupId), name: g.name, systemGroup: g.systemGroup });

/**
 * The install profile a declaration asks for, in the service's normalised form (what a GET shows).
 * With `withPasswords`, plain passwords are included (the request body; the service hashes them); a
 * declared account without a password is sent with an empty one, so that a removed password goes.
 */
export function installProfileOf(i: InstallationInput, withPasswords: boolean): InstallProfile | undefined {
  const root = i.rootUser;
  const p = present({
    diskSize: i.diskSize,
    groups: i.groups?.map(groupOf),
    kernelParameters: i.kernelParams,
    keyboard: i.keyboard as InstallProfile['keyboard'],
    memorySize: i.memorySize,
    rootUser: root && {
      disablePasswordLogin: root.disablePasswordLogin,
      password: withPasswords ? (root.password ?? '') : undefined,
      sshKeys: keysOf(root.sshKeys),
    },
    swapSize: i.swapSize,
    timezone: i.timezone,
    users: i.users?.map((u) => userOf(u, withPasswords)),
    welcomeMsg: i.welcomeMessage,
  });
  return Object.keys(p).length ? p : undefined;
}

/** A record without `encrypted` at any depth (password presence is compared by the fingerprint). */
function withoutEncrypted(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutEncrypted);
  if (v && typeof v === 'object') {
    return Object.fromEntries(Object.entries(v).filter(([k]) => k !== 'encrypted').map(([k, x]) => [k, withoutEncrypted(x)]));
  }
  return v;
}

/**
 * The declared settings that differ from the service's profile, by field name. A field not declared
 * matches whatever the service holds (e.g. sizes a builder sets); a declared list must match whole.
 */
export function installChanges(i: InstallationDecl, got: InstallProfile | undefined): string[] {
  const want = (installProfileOf(i, false) ?? {}) as Record<string, unknown>;
  const have = withoutEncrypted(redactRecord(installProfile, got ?? {})) as Record<string, unknown>;
  return Object.keys(want).filter((k) => JSON.stringify(want[k]) !== JSON.stringify(have[k]));
}

/** Which account has which declared password. */
function declaredPasswords(i: InstallationDecl): string[][] {
  return [
    ...(i.rootUser?.password !== undefined ? [['root', i.rootUser.password]] : []),
    ...(i.users ?? []).flatMap((u) => (u.password !== undefined ? [[u.name, u.password]] : [])),
  ];
}

const FINGERPRINT_BYTES = 16;
const FINGERPRINT_COST = { N: 1 << 14, r: 8, p: 1 };

/** Fingerprints computed in this process, by declaration and salt: each is costly on purpose, so it is made once. */
const fingerprints = new WeakMap<InstallationDecl, Map<string, { hex?: string; readonly ready: Promise<void> }>>();

/**
 * Starts the fingerprint on libuv's thread pool, so that its deliberate cost overlaps what the run does
 * meanwhile (starting the embedded server, the requests); `passwordFingerprint` then finds it. Never
 * rejects: on a failure the synchronous call computes it again and throws there.
 */
export function preparePasswordFingerprint(i: InstallationDecl, salt: string): Promise<void> {
  let bySalt = fingerprints.get(i);
  if (!bySalt) fingerprints.set(i, (bySalt = new Map()));
  const kept = bySalt.get(salt);
  if (kept) return kept.ready;
  const pw = declaredPasswords(i);
  if (pw.length === 0) return Promise.resolve();
  const entry: { hex?: string; ready: Promise<void> } = {
    ready: new Promise((resolve) => {
      scrypt(JSON.stringify(pw), `appliance-forge:${salt}`, FINGERPRINT_BYTES, FINGERPRINT_COST, (err, key) => {
        if (err) bySalt.delete(salt);
        else entry.hex = key.toString('hex');
        resolve();
      });
    }),
  };
  bySalt.set(salt, entry);
  return entry.ready;
}

/**
 * A fingerprint of the declared passwords (which account has which), scrypt-hashed with the template's
 * name and version as salt: it lets a second apply see a changed password without the service ever
 * showing one. Costlier to attack than the image's own /etc/shadow hash, which its owner can read anyway.
 */
export function passwordFingerprint(i: InstallationDecl, salt: string): string | undefined {
  const pw = declaredPasswords(i);
  if (pw.length === 0) return undefined;
  const kept = fingerprints.get(i)?.get(salt)?.hex;
  if (kept !== undefined) return kept;
  const hex = scryptSync(JSON.stringify(pw), `appliance-forge:${salt}`, FINGERPRINT_BYTES, FINGERPRINT_COST).toString('hex');
  let bySalt = fingerprints.get(i);
  if (!bySalt) fingerprints.set(i, (bySalt = new Map()));
  bySalt.set(salt, { hex, ready: Promise.resolve() });
  return hex;
}
