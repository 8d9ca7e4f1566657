// The stored install profile as the disk stage applies it (imaging/stages.ts `SystemSettings`).
// The profile was checked when it was written (install/profile.ts): this only maps and fills defaults.
import type { SystemGroup, SystemSettings, SystemUser } from '../../imaging';
import type { InstallProfile, OsUser } from '../../model/resources';
import { KEYBOARD_XKB } from '../../model/keyboards';
import { DEFAULT_DISK_MIB } from '../../model/limits';
import { present } from '../../model/present';

/**
 * A valid static hostname (RFC 1123 label, at most 63 characters) from a template's name:
 * lower case, runs of anything else than letters and digits become `-`; `appliance` when nothing is left.
 */
export function hostnameOf(applianceName: string): string {
  const h = applianceName
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, 63)
    .replace(/^-+|-+$/g, '');
  return h === '' ? 'appliance' : h;
}

const keysOf = (u: OsUser | undefined) => (u?.sshKeys ?? []).map((k) => present({ name: k.name, publicKey: k.publicKey! }));

function userOf(u: OsUser): SystemUser {
  return present({
    name: u.name!,
    fullName: u.fullName,
    homeDir: u.homeDir,
    shell: u.shell,
    primaryGroup: u.primaryGroup,
    secondaryGroups: (u.secondaryGroups ?? '').split(',').filter((g) => g !== ''),
    passwordHash: u.password,
    sshKeys: keysOf(u),
    uid: u.userId === undefined ? undefined : Number(u.userId),
    system: u.systemUser,
  });
}

/** The settings of an image of the template named `applianceName`, from its stored install profile. */
export function systemSettingsOf(applianceName: string, p: InstallProfile = {}): SystemSettings {
  const xkb = p.keyboard !== undefined ? KEYBOARD_XKB[p.keyboard] : undefined;
  const groups: SystemGroup[] = (p.groups ?? []).map((g) => present({
    name: g.name!,
    gid: g.groupId === undefined ? undefined : Number(g.groupId),
    system: g.systemGroup ?? false,
  }));
  return present({
    hostname: hostnameOf(applianceName),
    diskMiB: p.diskSize ?? DEFAULT_DISK_MIB,
    swapMiB: p.swapSize ?? 0,
    timezone: p.timezone ?? 'Etc/UTC',
    keyboard: xkb && present({ layout: xkb[0], variant: xkb[1] }),
    kernelParams: (p.kernelParameters ?? '').split(' ').filter((w) => w !== ''),
    rootUser: present({
      passwordHash: p.rootUser?.password,
      disablePasswordLogin: p.rootUser?.disablePasswordLogin ?? false,
      sshKeys: keysOf(p.rootUser),
    }),
    users: (p.users ?? []).map(userOf),
    groups,
    welcomeMessage: p.welcomeMsg,
  });
}
