// The guest's network under QEMU's user-mode NIC (slirp): QEMU's documented defaults, named on QEMU's
// command line (qemu.ts) so that the fast path's static address (fast-params.ts) is, by construction,
// the one QEMU's DHCP server hands the guest.
const PREFIX_LENGTH = 24;

/** A prefix length as a dotted netmask (24 → 255.255.255.0), for the kernel's `ip=` word. */
function netmaskOf(bits: number): string {
  return [0, 1, 2, 3].map((i) => 256 - 2 ** (8 - Math.min(8, Math.max(0, bits - 8 * i)))).join('.');
}

export const USER_NETWORK = {
  /** The guest's subnet, and its mask. */
  net: `10.0.2.0/${PREFIX_LENGTH}`,
  netmask: netmaskOf(PREFIX_LENGTH),
  /** The gateway: QEMU itself (forwards, NAT). */
  host: '10.0.2.2',
  /** QEMU's DNS forwarder. */
  dns: '10.0.2.3',
  /** The first (and, with one NIC, only) address QEMU's DHCP server gives. */
  guest: '10.0.2.15',
} as const;
