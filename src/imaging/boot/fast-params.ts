import { USER_NETWORK } from './user-network';

// What the direct-kernel path adds to the image's own kernel command line (QEMU's -append only; the
// image is never changed). Under TCG every unit started and every console byte (a trapped UART write)
// costs the one vCPU, so the fast path boots with:
// - no gettys on tty1..6 (no display under -nodefaults; the serial console keeps its getty);
// - the kernel's informational messages and systemd's copies of its log off the console: notices stay
//   (the kernel's `Kernel command line:`), warnings and errors stay, and systemd shows unit status only
//   once a job is slow or fails (`auto`), so a stuck or failed boot still explains itself;
// - no drm module (no display), no debugfs or tracefs mount;
// - none of the kernel interfaces a smoke check does not use that systemd mounts or loads at every boot:
//   the FUSE control filesystem and its module's unit (/dev/fuse still loads the module on first open),
//   configfs (kernel targets and USB gadgets), /dev/hugepages (hugetlbfs), and udev's credentials
//   (none are passed to a check's guest);
// - none of the units that only keep state for the next boot, which a snapshot=on boot never has: the
//   journal's move to /var/log/journal (it stays in /run/log/journal, `journalctl` reads it there), the
//   random seed's save (RDRAND makes the pool ready, qemu.ts), the transient machine-id's commit to /etc,
//   and the EFI pstore backend (crash records in a variable store the check throws away);
// - two of the kernel's own start-up calls skipped (`initcall_blacklist`; 0.4 and 0.2 s of a TCG
//   boot's kernel in `initcall_debug`): the self-test of the SP 800-108 key derivation (a test only; it
//   derives nothing) and the `encrypted` key type's registration (keys sealed for ecryptfs or EVM, which
//   a throwaway check never loads);
// - no PATA drivers: QEMU attaches the disk as virtio here (qemu.ts), and the i440FX board's IDE
//   controller, which ata_piix would probe in the initramfs, has no drive on it;
// - with a NIC, its address set in the initramfs and no ifupdown `networking.service` (FAST_NETWORK_PARAMS).
// They change which units run, so a caller can boot without them (`fastParams: false`, `boot --no-fast-params`).
// Measured and left out: mitigations=off (the kernel reached /init later with it, four pairs of four);
// cryptomgr.notests (no change: Debian's kernel runs few self-tests at start).
export const FAST_KERNEL_PARAMS = [
  'systemd.mask=getty-static.service',
  'systemd.mask=getty@tty1.service',
  'loglevel=6',
  'systemd.show_status=auto',
  'systemd.mask=modprobe@drm.service',
  'systemd.mask=sys-kernel-debug.mount',
  'systemd.mask=sys-kernel-tracing.mount',
  'systemd.mask=systemd-journal-flush.service',
  'systemd.mask=systemd-random-seed.service',
  'systemd.mask=systemd-machine-id-commit.service',
  'systemd.mask=modprobe@efi_pstore.service',
  'systemd.mask=modprobe@fuse.service',
  'systemd.mask=sys-fs-fuse-connections.mount',
  'systemd.mask=modprobe@configfs.service',
  'systemd.mask=sys-kernel-config.mount',
  'systemd.mask=dev-hugepages.mount',
  'systemd.mask=systemd-udev-load-credentials.service',
  'initcall_blacklist=init_encrypted,crypto_kdf108_init',
  'modprobe.blacklist=ata_piix,ata_generic,pata_legacy',
] as const;

/**
 * Added when the guest has a NIC. With `ip=` set, initramfs-tools' init (Debian 13's; its
 * scripts/functions `configure_networking`) waits for a network device and configures it with klibc's
 * `ipconfig` once the root is mounted, before systemd starts; the interface keeps its address across the
 * switch to the root, so a server answers as soon as it listens. Without it the address waits for the
 * root's udev to reach the NIC's coldplug event, then `ifup@eth0` and dhclient, seconds after nginx is
 * up. The address is static: the one QEMU's DHCP server gives this guest (user-network.ts, named on
 * QEMU's command line too), with its gateway and DNS, on whatever device comes first (the device field
 * is empty: any NIC name). `ip=dhcp` took the same address ~1.1 s later: `ipconfig` looks at the link
 * once a second and finds it down at the first look. dhclient still runs later (`ifup@eth0`, hotplug)
 * and is handed the same address. Debian 12's initramfs-tools does this only for an NFS root, so there
 * the word is inert. Never without a NIC: the initramfs would wait 180 s for one. Never when the
 * image's own line has an `ip=` word (its choice stands).
 * With them, ifupdown's `networking.service` is masked: its `ifup -a` raises the interfaces marked
 * `auto`, and a check's guest has only `lo` (which systemd raises itself) and its one NIC, configured
 * by the initramfs (Debian 13) or by `ifup@eth0` on hotplug (this project's images mark it
 * `allow-hotplug`; that unit does not need networking.service). nginx and every unit ordered after
 * `network-online.target` waited on it: ~1.3 s of `ifup -a` on 2 vCPUs. An image of another origin
 * that marks its NIC `auto` on Debian 12 gets no address by the fast path: `--no-fast-params`.
 */
export const FAST_NETWORK_PARAMS = [
  'systemd.mask=networking.service',
  // ip=<client>:<server>:<gateway>:<netmask>:<hostname>:<device>:<autoconf>:<dns0>
  `ip=${USER_NETWORK.guest}::${USER_NETWORK.host}:${USER_NETWORK.netmask}:::off:${USER_NETWORK.dns}`,
] as const;

/**
 * The command line QEMU gives the kernel: the image's own, then the fast-path words unless turned off;
 * the network ones only when the guest has a NIC (`nic`) and the image's line sets no `ip=`.
 */
export function directCommandLine(imageCommandLine: string, fast: boolean, nic: boolean): string {
  if (!fast) return imageCommandLine;
  const ownIp = imageCommandLine.split(/\s+/).some((w) => w.startsWith('ip='));
  return [imageCommandLine, ...FAST_KERNEL_PARAMS, ...(nic && !ownIp ? FAST_NETWORK_PARAMS : [])].join(' ');
}
