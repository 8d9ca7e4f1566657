// Groups, users, passwords and ssh keys of the image, made with the image's own shadow tools
// (`--root TREE`: they chroot into the tree, so its /etc/login.defs, /etc/skel and files are used).
// Passwords arrive only as crypt(3) hashes and go to `chpasswd -e` on its stdin, never on a command line.
import { chmod, lchown, mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ImagingError } from './errors';
import { runTool } from './run';
import type { SshKey, SystemSettings } from './system';
import { readAccounts, resolveParent } from './tree';

const NAME = /^[a-z_][a-z0-9_-]*[$]?$/;

function checkName(kind: string, name: string): void {
  if (!NAME.test(name) || name.length > 32) throw new ImagingError('input', `refused ${kind} name ${JSON.stringify(name)}: expected a POSIX account name`);
}

export async function applyAccounts(tree: string, s: SystemSettings, signal?: AbortSignal): Promise<void> {
  const run = (cmd: string, args: string[], input?: string) => runTool(cmd, ['--root', tree, ...args], { signal, ...(input !== undefined ? { input } : {}) });
  const before = await readAccounts(tree);
  for (const g of s.groups) {
    checkName('group', g.name);
    const existing = before.groups.get(g.name);
    if (existing !== undefined) {
      if (g.gid !== undefined && g.gid !== existing) throw new ImagingError('input', `group ${g.name} already exists in the OS with gid ${existing}, not ${g.gid}`);
      continue;
    }
    await run('groupadd', [...(g.gid !== undefined ? ['--gid', String(g.gid)] : []), ...(g.system ? ['--system'] : []), '--', g.name]);
  }
  for (const u of s.users) {
    checkName('user', u.name);
    if (before.users.has(u.name)) throw new ImagingError('input', `user ${u.name} already exists in the OS image`);
    const args = ['--create-home', '--shell', u.shell ?? '/bin/bash'];
    if (u.homeDir !== undefined) args.push('--home-dir', u.homeDir);
    if (u.fullName !== undefined) {
      if (/[:\n]/.test(u.fullName)) throw new ImagingError('input', `refused full name of ${u.name}: it contains ":" or a newline`);
      args.push('--comment', u.fullName);
    }
    args.push(...(u.primaryGroup !== undefined ? ['--gid', u.primaryGroup] : ['--user-group']));
    if (u.secondaryGroups.length > 0) args.push('--groups', u.secondaryGroups.join(','));
    await run('useradd', [...args, '--', u.name]);
  }
  const hashes = [
    ...(s.rootUser.passwordHash !== undefined ? [`root:${s.rootUser.passwordHash}`] : []),
    ...s.users.filter((u) => u.passwordHash !== undefined).map((u) => `${u.name}:${u.passwordHash!}`),
  ];
  for (const h of hashes) if (/[\n:]/.test(h.slice(h.indexOf(':') + 1))) throw new ImagingError('input', 'refused a password hash: it contains ":" or a newline');
  if (hashes.length > 0) await run('chpasswd', ['--encrypted'], hashes.join('\n') + '\n');
  // No password login for root: the hash is locked ("!" prefix); keys still work.
  if (s.rootUser.disablePasswordLogin) await run('usermod', ['--lock', 'root']);

  const after = await readAccounts(tree);
  await writeKeys(tree, 'root', after.users.get('root'), s.rootUser.sshKeys);
  for (const u of s.users) await writeKeys(tree, u.name, after.users.get(u.name), u.sshKeys);
}

/** ~/.ssh/authorized_keys, 0700/0600, owned by the user (sshd's StrictModes refuses anything looser). */
async function writeKeys(tree: string, name: string, user: { uid: number; gid: number; home: string } | undefined, keys: readonly SshKey[]): Promise<void> {
  if (keys.length === 0) return;
  if (user === undefined) throw new ImagingError('input', `no user ${name} in the image for its ssh keys`);
  for (const k of keys) if (/[\r\n]/.test(k.publicKey)) throw new ImagingError('input', `refused an ssh key of ${name}: it spans several lines`);
  const segments = [...user.home.split('/').filter((x) => x !== ''), '.ssh', 'authorized_keys'];
  const { dir, missing } = await resolveParent(tree, segments);
  if (missing.length > 1) throw new ImagingError('input', `the home directory of ${name} (${user.home}) does not exist in the image`);
  const sshDir = join(tree, ...dir, ...missing); // ~/.ssh, followed through the image's links
  if (missing.length === 1) await mkdir(sshDir);
  await lchown(sshDir, user.uid, user.gid);
  await chmod(sshDir, 0o700);
  const file = join(sshDir, 'authorized_keys');
  await rm(file, { force: true }); // never written through a link
  await writeFile(file, keys.map((k) => k.publicKey.trim()).join('\n') + '\n', { flag: 'wx' });
  await lchown(file, user.uid, user.gid);
  await chmod(file, 0o600);
}
