// What the direct-kernel path adds to the image's own kernel command line (QEMU's -append only; the
// image is never changed). Under TCG every unit started and every console byte (a trapped UART write)
// costs the one vCPU, so the fast path boots with:
// - no gettys on tty1..6 (no display under -nodefaults; the serial console keeps its getty);
// - the kernel's informational messages and systemd's copies of its log off the console: notices stay
//   (the kernel's `Kernel command line:`), warnings and errors stay, and systemd shows unit status only
//   once a job is slow or fails (`auto`), so a stuck or failed boot still explains itself;
// - no drm module (no display), no debugfs or tracefs mount;
// - none of the units that only keep state for the next boot, which a snapshot=on boot never has: the
//   journal's move to /var/log/journal (it stays in /run/log/journal, `journalctl` reads it there), the
//   random seed's save (RDRAND makes the pool ready, qemu.ts), the transient machine-id's commit to /etc,
//   and the EFI pstore backend (crash records in a variable store the check throws away);
// - no PATA drivers: QEMU attaches the disk as virtio here (qemu.ts), and the i440FX board's IDE
//   controller, which ata_piix would probe in the initramfs, has no drive on it;
// - with a NIC, the DHCP lease taken in the initramfs (FAST_NETWORK_PARAMS).
// They change which units run, so a caller can boot without them (`fastParams: false`, `boot --no-fast-params`).
// Measured and left out: mitigations=off (the kernel reached /init later with it, four pairs of four).
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
  'modprobe.blacklist=ata_piix,ata_generic,pata_legacy',
] as const;

/**
 * Added when the guest has a NIC. With `ip=` set, initramfs-tools' init (Debian 13's; its
 * scripts/functions `configure_networking`) waits for a network device and asks for a lease with
 * klibc's `ipconfig` once the root is mounted, before systemd starts; the interface keeps its address
 * across the switch to the root, so a server answers as soon as it listens. Without it the lease waits
 * for the root's udev to reach the NIC's coldplug event, then `ifup@eth0` and dhclient, seconds after
 * nginx is up. `dhcp` names no device: any NIC, whatever the image calls it. Debian 12's initramfs-tools
 * does this only for an NFS root, so there the word is inert. Never without a NIC: the initramfs would
 * wait 180 s for one. Never when the image's own line has an `ip=` word (its choice stands).
 */
export const FAST_NETWORK_PARAMS = ['ip=dhcp'] as const;

/**
 * The command line QEMU gives the kernel: the image's own, then the fast-path words unless turned off;
 * the network ones only when the guest has a NIC (`nic`) and the image's line sets no `ip=`.
 */
export function directCommandLine(imageCommandLine: string, fast: boolean, nic: boolean): string {
  if (!fast) return imageCommandLine;
  const ownIp = imageCommandLine.split(/\s+/).some((w) => w.startsWith('ip='));
  return [imageCommandLine, ...FAST_KERNEL_PARAMS, ...(nic && !ownIp ? FAST_NETWORK_PARAMS : [])].join(' ');
}
