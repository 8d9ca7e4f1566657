// The guest's network under QEMU's user-mode NIC (slirp): QEMU's documented defaults, named on QEMU's
// command line (qemu.ts) so that the fast path's static address (fast-params.ts) is, by construction,
// the one QEMU's DHCP server hands the guest.
export const USER_NETWORK = {
  /** The guest's subnet, and its mask for the kernel's `ip=` word. */
  net: '10.0.2.0/24',
  netmask: '255.255.255.0',
  /** The gateway: QEMU itself (forwards, NAT). */
  host: '10.0.2.2',
  /** QEMU's DNS forwarder. */
  dns: '10.0.2.3',
  /** The first (and, with one NIC, only) address QEMU's DHCP server gives. */
  guest: '10.0.2.15',
} as const;
