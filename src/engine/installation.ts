// `stack.installation` (the platform tool's field names) read into the appliance's install profile.
// The parser checks shapes with file/line/column; values (ranges, names, keys) are the service's to
// judge, and its 400 names the field. Passwords never reach a plan or a message: the service only
// shows `encrypted: true`, so the engine compares them through a scrypt fingerprint kept in the tag.
import { scryptSync } from 'node:crypto';
import { isSeq } from 'yaml';
import { redactRecord } from '../model/redact';
import { installProfile, type InstallProfile, type OsGroup, type OsUser } from '../model/resources';
import { INSTALLATION, keyNames, OS_GROUP, OS_USER, ROOT_USER, SSH_KEY } from './declaration-format';
import type { Position } from './problems';
import { notIn, sshKeyProblem, takenName, timezoneProblem, unknownGroup, VOCABULARIES } from './vocabularies';
import type { MapView, YamlReader } from './yaml-reader';

export interface SshKeyDecl {
  readonly name?: string;
  readonly publicKey: string;
}

export interface OsUserDecl {
  readonly name: string;
  readonly fullName?: string;
  readonly userId?: number;
  readonly primaryGroup?: string;
  readonly secondaryGroups?: readonly string[];
  readonly homeDir?: string;
  readonly shell?: string;
  readonly systemUser?: boolean;
  readonly password?: string;
  readonly disablePasswordLogin?: boolean;
  readonly sshKeys?: readonly SshKeyDecl[];
  readonly at: Position;
}

export interface OsGroupDecl {
  readonly name: string;
  readonly groupId?: number;
  readonly systemGroup?: boolean;
  readonly at: Position;
}

/** Appliance-level install settings (`stack.installation`), sizes in MiB. */
export interface InstallationDecl {
  readonly diskSize?: number;
  readonly swapSize?: number;
  readonly memorySize?: number;
  readonly timezone?: string;
  readonly keyboard?: string;
  /** Kernel command-line words, space separated. */
  readonly kernelParams?: string;
  readonly rootUser?: {
    readonly password?: string;
    readonly disablePasswordLogin?: boolean;
    readonly sshKeys?: readonly SshKeyDecl[];
  };
  readonly users?: readonly OsUserDecl[];
  readonly groups?: readonly OsGroupDecl[];
  readonly welcomeMessage?: string;
}

/** The same section without source positions: the Pulumi provider's `installation` input. */
export type InstallationInput = Omit<InstallationDecl, 'users' | 'groups'> & {
  readonly users?: readonly Omit<OsUserDecl, 'at'>[];
  readonly groups?: readonly Omit<OsGroupDecl, 'at'>[];
};

export const INSTALL_KEYS = keyNames(INSTALLATION);
export const ROOT_KEYS = keyNames(ROOT_USER);
export const USER_KEYS = keyNames(OS_USER);
export const GROUP_KEYS = keyNames(OS_GROUP);
export const KEY_KEYS = keyNames(SSH_KEY);

/** `sshKeys` of root or a user: the items read, or undefined where the key is absent. */
function readKeys(r: YamlReader, m: MapView<typeof ROOT_USER> | MapView<typeof OS_USER>, what: string): SshKeyDecl[] | undefined {
  if (!m.has('sshKeys')) return undefined;
  return (m as MapView<typeof ROOT_USER>).seq('sshKeys').flatMap((item) => {
    const k = r.map(item, `${what}.sshKeys[]`, SSH_KEY, m.keyAt('sshKeys'));
    const publicKey = k?.str('publicKey');
    if (k && publicKey) r.vocabulary(k.valueAt('publicKey'), () => sshKeyProblem(`${what}.sshKeys[].publicKey`, publicKey));
    const name = k?.str('name');
    return publicKey ? [{ ...(name !== undefined ? { name } : {}), publicKey: publicKey.trim() }] : [];
  });
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
  const opt = <K extends string, V>(k: K, v: V | undefined) => (v !== undefined ? ({ [k]: v } as { [P in K]: V }) : {});
  // Passwords are secrets (the shapes' model: osUser.password), masked in every output.
  const root = m.has('rootUser') ? m.map('rootUser') : undefined;
  const users: OsUserDecl[] = [];
  const seenUsers = new Set<string>();
  // A user's groups, checked once every declared group is known.
  const groupRefs: Array<{ at: Position; label: string; group: string }> = [];
  for (const item of m.seq('users')) {
    const u = r.map(item, `${what}.users[]`, OS_USER, m.keyAt('users'));
    const name = u?.str('name');
    if (!u || !name) continue;
    if (seenUsers.has(name)) r.problems.add(u.valueAt('name'), `user "${name}" is declared twice`);
    seenUsers.add(name);
    r.vocabulary(u.valueAt('name'), () => takenName(`${what}.users[].name`, name, 'user'));
    const primary = u.str('primaryGroup');
    const secondary = readGroupList(r, u, `${what}.users[]`);
    if (primary !== undefined) groupRefs.push({ at: u.valueAt('primaryGroup'), label: `${what}.users[].primaryGroup`, group: primary });
    for (const g of secondary ?? []) groupRefs.push({ at: u.valueAt('secondaryGroups'), label: `${what}.users[].secondaryGroups`, group: g });
    users.push({
      name,
      ...opt('fullName', u.str('fullName')),
      ...opt('userId', u.int('userId')),
      ...opt('primaryGroup', primary),
      ...opt('secondaryGroups', secondary),
      ...opt('homeDir', u.str('homeDir')),
      ...opt('shell', u.str('shell')),
      ...opt('systemUser', u.bool('systemUser')),
      ...opt('password', u.str('password')),
      ...opt('disablePasswordLogin', u.bool('disablePasswordLogin')),
      ...opt('sshKeys', readKeys(r, u, `${what}.users[]`)),
      at: u.at,
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
    r.vocabulary(g.valueAt('name'), () => takenName(`${what}.groups[].name`, name, 'group'));
    groups.push({ name, ...opt('groupId', g.int('groupId')), ...opt('systemGroup', g.bool('systemGroup')), at: g.at });
  }
  for (const g of groupRefs) r.vocabulary(g.at, () => unknownGroup(g.label, g.group, seenGroups));
  const timezone = m.str('timezone');
  const keyboard = m.str('keyboard');
  if (timezone !== undefined) r.vocabulary(m.valueAt('timezone'), () => timezoneProblem(`${what}.timezone`, timezone));
  if (keyboard !== undefined) r.vocabulary(m.valueAt('keyboard'), () => notIn(`${what}.keyboard`, keyboard, VOCABULARIES.keyboard));
  const kernel = m.str('kernelParams');
  return {
    ...opt('diskSize', m.int('diskSize')),
    ...opt('swapSize', m.int('swapSize')),
    ...opt('memorySize', m.int('memorySize')),
    ...opt('timezone', timezone),
    ...opt('keyboard', keyboard),
    ...opt('kernelParams', kernel?.split(/\s+/).filter((w) => w !== '').join(' ')),
    ...(root
      ? { rootUser: { ...opt('password', root.str('password')), ...opt('disablePasswordLogin', root.bool('disablePasswordLogin')), ...opt('sshKeys', readKeys(r, root, `${what}.rootUser`)) } }
      : {}),
    ...(m.has('users') ? { users } : {}),
    ...(m.has('groups') ? { groups } : {}),
    ...opt('welcomeMessage', m.str('welcomeMessage')),
  };
}

const keysOf = (keys: readonly SshKeyDecl[] | undefined) => (keys ? { sshKeys: keys.map((k) => ({ ...k })) } : {});

function userOf(u: Omit<OsUserDecl, 'at'>, withPasswords: boolean): OsUser {
  return {
    ...(u.disablePasswordLogin !== undefined ? { disablePasswordLogin: u.disablePasswordLogin } : {}),
    ...(u.fullName !== undefined ? { fullName: u.fullName } : {}),
    ...(u.homeDir !== undefined ? { homeDir: u.homeDir } : {}),
    name: u.name,
    ...(withPasswords && u.password !== undefined ? { password: u.password } : {}),
    ...(u.primaryGroup !== undefined ? { primaryGroup: u.primaryGroup } : {}),
    ...(u.secondaryGroups?.length ? { secondaryGroups: u.secondaryGroups.join(',') } : {}),
    ...(u.shell !== undefined ? { shell: u.shell } : {}),
    ...keysOf(u.sshKeys),
    ...(u.systemUser !== undefined ? { systemUser: u.systemUser } : {}),
    ...(u.userId !== undefined ? { userId: String(u.userId) } : {}),
  };
}

function groupOf(g: Omit<OsGroupDecl, 'at'>): OsGroup {
  return { ...(g.groupId !== undefined ? { groupId: String(g.groupId) } : {}), name: g.name, ...(g.systemGroup !== undefined ? { systemGroup: g.systemGroup } : {}) };
}

/**
 * The install profile a declaration asks for, in the service's normalised form (what a GET shows).
 * With `withPasswords`, plain passwords are included (the request body; the service hashes them); a
 * declared account without a password is sent with an empty one, so that a removed password goes.
 */
export function installProfileOf(i: InstallationInput, withPasswords: boolean): InstallProfile | undefined {
  const root = i.rootUser;
  const p: InstallProfile = {
    ...(i.diskSize !== undefined ? { diskSize: i.diskSize } : {}),
    ...(i.groups ? { groups: i.groups.map(groupOf) } : {}),
    ...(i.kernelParams !== undefined ? { kernelParameters: i.kernelParams } : {}),
    ...(i.keyboard !== undefined ? { keyboard: i.keyboard as InstallProfile['keyboard'] } : {}),
    ...(i.memorySize !== undefined ? { memorySize: i.memorySize } : {}),
    ...(root
      ? {
          rootUser: {
            ...(root.disablePasswordLogin !== undefined ? { disablePasswordLogin: root.disablePasswordLogin } : {}),
            ...(withPasswords ? { password: root.password ?? '' } : {}),
            ...keysOf(root.sshKeys),
          },
        }
      : {}),
    ...(i.swapSize !== undefined ? { swapSize: i.swapSize } : {}),
    ...(i.timezone !== undefined ? { timezone: i.timezone } : {}),
    ...(i.users ? { users: i.users.map((u) => ({ ...userOf(u, withPasswords), ...(withPasswords && u.password === undefined ? { password: '' } : {}) })) } : {}),
    ...(i.welcomeMessage !== undefined ? { welcomeMsg: i.welcomeMessage } : {}),
  };
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

/**
 * A fingerprint of the declared passwords (which account has which), scrypt-hashed with the template's
 * name and version as salt: it lets a second apply see a changed password without the service ever
 * showing one. Costlier to attack than the image's own /etc/shadow hash, which its owner can read anyway.
 */
export function passwordFingerprint(i: InstallationDecl, salt: string): string | undefined {
  const pw = [
    ...(i.rootUser?.password !== undefined ? [['root', i.rootUser.password]] : []),
    ...(i.users ?? []).flatMap((u) => (u.password !== undefined ? [[u.name, u.password]] : [])),
  ];
  if (pw.length === 0) return undefined;
  return scryptSync(JSON.stringify(pw), `appliance-forge:${salt}`, 16, { N: 1 << 14, r: 8, p: 1 }).toString('hex');
}
