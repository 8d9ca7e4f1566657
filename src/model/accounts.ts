// Accounts a Debian 12 image already has (base-passwd's /usr/share/base-passwd/{passwd,group}.master
// plus those created by the packages of a Minimal image: systemd, dbus, openssh-server, cloud-init's
// dependencies). A declared user or group may not take one of these names; a user's groups may be
// one of STANDARD_GROUPS or a declared group. The install profile's checker (install-profile.ts) reads them.

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

/** Why a declared name is refused (the server's 400, and `validate` offline). */
export const TAKEN_USER = 'is an account the image already has';
export const TAKEN_GROUP = 'is a group the image already has';
export const NOT_A_GROUP = 'is neither a declared group nor a standard Debian group';

/** Debian policy §9.2.2: ids 100–999 for system accounts, 1000–59999 for ordinary ones. */
export const SYSTEM_IDS = { min: 100, max: 999 } as const;
export const USER_IDS = { min: 1000, max: 59999 } as const;
