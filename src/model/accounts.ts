// Accounts a Debian 12 or 13 image already has (base-passwd's /usr/share/base-passwd/{passwd,group}.master
// plus those created by the packages of a Minimal image: systemd, dbus, openssh-server, cloud-init's
// dependencies), and the groups only some releases have (OsRelease.extraGroups). The checker of the
// install profile (install-profile.ts) does not know the release: a declared user or group may not take
// a name any release's image has; a user's groups may be one of STANDARD_GROUPS (every release has them)
// or a declared group.
import { OS_RELEASES } from './releases';

export const SYSTEM_USERS: ReadonlySet<string> = new Set([
  'root', 'daemon', 'bin', 'sys', 'sync', 'games', 'man', 'lp', 'mail', 'news', 'uucp', 'proxy',
  'www-data', 'backup', 'list', 'irc', '_apt', 'nobody', 'systemd-network', 'systemd-resolve',
  'systemd-timesync', 'systemd-coredump', 'messagebus', 'sshd', 'polkitd', 'tcpdump', '_chrony',
]);

export const STANDARD_GROUPS: ReadonlySet<string> = new Set([
  'root', 'daemon', 'bin', 'sys', 'adm', 'tty', 'disk', 'lp', 'mail', 'news', 'uucp', 'man', 'proxy',
  'kmem', 'dialout', 'fax', 'voice', 'cdrom', 'floppy', 'tape', 'sudo', 'audio', 'dip', 'www-data',
  'backup', 'operator', 'list', 'irc', 'src', 'shadow', 'utmp', 'video', 'sasl', 'plugdev', 'staff',
  'games', 'users', 'nogroup', 'systemd-journal', 'systemd-network', 'systemd-resolve',
  'systemd-timesync', 'input', 'sgx', 'kvm', 'render', 'netdev', 'messagebus', '_ssh', 'crontab',
  'systemd-coredump', 'polkitd', 'tcpdump', '_chrony',
]);

/** Names a declared group may not take: the groups of every release's image. */
export const TAKEN_GROUPS: ReadonlySet<string> = new Set([...STANDARD_GROUPS, ...OS_RELEASES.flatMap((r) => r.extraGroups)]);

/** Why a declared name is refused (the server's 400, and `validate` offline). */
export const TAKEN_USER = 'is an account the image already has';
export const TAKEN_GROUP = 'is a group the image already has';
export const NOT_A_GROUP = 'is neither a declared group nor a standard Debian group';

/** Debian policy §9.2.2: ids 100–999 for system accounts, 1000–59999 for ordinary ones. */
export const SYSTEM_IDS = { min: 100, max: 999 } as const;
export const USER_IDS = { min: 1000, max: 59999 } as const;
