// Groups, users, passwords and ssh keys of the image, made with the image's own shadow tools
// (`--root TREE`: they chroot into the tree, so its /etc/login.defs, /etc/skel and files are used).
// Passwords arrive only as crypt(3) hashes and go to `chpasswd -e` on its stdin, never on a command line.
import type { BuildHost } from '../build-host';
import { ImagingError } from '../errors';
import type { SshKey, SystemSettings } from '../stages';
import { readAccounts } from '../tree';
import type { TreeWriter } from './tree-writer';

const NAME = /^[a-z_][a-z0-9_-]*[$]?$/;

function checkName(kind: string, name: string): void {
  if (!NAME.test(name) || name.length > 32) throw new ImagingError('input', `refused ${kind} name ${JSON.stringify(name)}: expected a POSIX account name`);
}

/** The name that already has `id` among `names` (a map of name → id), if any. */
function holderOf(names: ReadonlyMap<string, number>, id: number): string | undefined {
  for (const [name, n] of names) if (n === id) return name;
  return undefined;
}

/** `env`: SOURCE_DATE_EPOCH, which the shadow tools take as today's date for /etc/shadow's change days. */
export async function applyAccounts(w: TreeWriter, s: SystemSettings, signal?: AbortSignal, env?: Readonly<Record<string, string>>): Promise<void> {
  // The shadow tools chroot into the tree: they run as root of the build's namespace, never the host's.
  const run = (cmd: string, args: string[], input?: string) =>
    w.host.run(cmd, ['--root', w.root, ...args], { signal, input, env });
  const before = await readAccounts(w.root);
  for (const g of s.groups) {
    checkName('group', g.name);
    const existing = before.groups.get(g.name);
    if (existing !== undefined) {
      if (g.gid !== undefined && g.gid !== existing) throw new ImagingError('input', `group ${g.name} already exists in the OS with gid ${existing}, not ${g.gid}`);
      continue;
    }
    const taken = g.gid === undefined ? undefined : holderOf(before.groups, g.gid);
    if (taken !== undefined) throw new ImagingError('input', `gid ${g.gid} of group ${g.name} is already taken by group ${taken} in the OS`);
    await run('groupadd', [...(g.gid !== undefined ? ['--gid', String(g.gid)] : []), ...(g.system ? ['--system'] : []), '--', g.name]);
  }
  const uids = new Map([...before.users].map(([name, u]) => [name, u.uid]));
  for (const u of s.users) {
    checkName('user', u.name);
    if (before.users.has(u.name)) throw new ImagingError('input', `user ${u.name} already exists in the OS image`);
    const taken = u.uid === undefined ? undefined : holderOf(uids, u.uid);
    if (taken !== undefined) throw new ImagingError('input', `uid ${u.uid} of user ${u.name} is already taken by user ${taken} in the OS`);
    const args = ['--create-home', '--shell', u.shell ?? '/bin/bash'];
    if (u.uid !== undefined) args.push('--uid', String(u.uid));
    if (u.system === true) args.push('--system');
    if (u.homeDir !== undefined) args.push('--home-dir', u.homeDir);
    if (u.fullName !== undefined) {
      if (/[:\n]/.test(u.fullName)) throw new ImagingError('input', `refused full name of ${u.name}: it contains ":" or a newline`);
      args.push('--comment', u.fullName);
    }
    args.push(...(u.primaryGroup !== undefined ? ['--gid', u.primaryGroup] : ['--user-group']));
    if (u.secondaryGroups.length > 0) args.push('--groups', u.secondaryGroups.join(','));
    await run('useradd', [...args, '--', u.name]);
  }
  await applyPasswords(w.root, s, w.host, signal, env);

  const after = await readAccounts(w.root);
  await writeKeys(w, 'root', after.users.get('root'), s.rootUser.sshKeys);
  for (const u of s.users) await writeKeys(w, u.name, after.users.get(u.name), u.sshKeys);
}

/** Whether the settings give any account a password hash. */
export function hasPasswords(s: SystemSettings): boolean {
  return s.rootUser.passwordHash !== undefined || s.users.some((u) => u.passwordHash !== undefined);
}

/** The settings without their password hashes (what an image's base disk is made with: hashes are salted anew each time). */
export function withoutPasswords(s: SystemSettings): SystemSettings {
  const strip = <T extends { passwordHash?: string }>(a: T): Omit<T, 'passwordHash'> => {
    const { passwordHash: _hash, ...rest } = a;
    return rest;
  };
  return { ...s, rootUser: strip(s.rootUser), users: s.users.map(strip) };
}

/**
 * The password hashes (`chpasswd -e`, on its stdin) and root's lock, by the image's shadow tools on
 * `root` (a tree, or just its account files: they read and write only those).
 */
export async function applyPasswords(root: string, s: SystemSettings, host: BuildHost, signal?: AbortSignal, env?: Readonly<Record<string, string>>): Promise<void> {
  const run = (cmd: string, args: string[], input?: string) => host.run(cmd, ['--root', root, ...args], { signal, input, env });
  const hashes = [
    ...(s.rootUser.passwordHash !== undefined ? [`root:${s.rootUser.passwordHash}`] : []),
    ...s.users.filter((u) => u.passwordHash !== undefined).map((u) => `${u.name}:${u.passwordHash!}`),
  ];
  for (const h of hashes) if (/[\n:]/.test(h.slice(h.indexOf(':') + 1))) throw new ImagingError('input', 'refused a password hash: it contains ":" or a newline');
  if (hashes.length > 0) await run('chpasswd', ['--encrypted'], hashes.join('\n') + '\n');
  // No password login for root: the hash is locked ("!" prefix); keys still work.
  if (s.rootUser.disablePasswordLogin) await run('usermod', ['--lock', 'root']);
}

/** ~/.ssh/authorized_keys, 0700/0600, owned by the user (sshd's StrictModes refuses anything looser). */
async function writeKeys(w: TreeWriter, name: string, user: { uid: number; gid: number; home: string } | undefined, keys: readonly SshKey[]): Promise<void> {
  if (keys.length === 0) return;
  if (user === undefined) throw new ImagingError('input', `no user ${name} in the image for its ssh keys`);
  for (const k of keys) if (/[\r\n]/.test(k.publicKey)) throw new ImagingError('input', `refused an ssh key of ${name}: it spans several lines`);
  const home = user.home.split('/').filter((x) => x !== '');
  if (!(await w.exists(`/${home.join('/')}`))) throw new ImagingError('input', `the home directory of ${name} (${user.home}) does not exist in the image`);
  const owner = { uid: user.uid, gid: user.gid };
  await w.mkdir([...home, '.ssh'], owner, 0o700);
  await w.writeText([...home, '.ssh', 'authorized_keys'], keys.map((k) => k.publicKey.trim()).join('\n') + '\n', 0o600, owner);
}
