// The accelerators a boot can ask for, with the help text of each: one list for the CLI's option, its
// usage error and help, and bootCheck's check of its input.

/** What QEMU runs the guest under. */
export type Accelerator = 'kvm' | 'tcg';

/** What a caller asks for, each with the words the CLI's help gives it. */
export const ACCEL_CHOICES = {
  auto: 'KVM when /dev/kvm opens read-write and a probe runs the image\'s kernel under it, else TCG (one line on stderr says why)',
  kvm: 'KVM, or fail (exit 1) with one line saying why',
  tcg: 'TCG (QEMU\'s emulator) on any host, /dev/kvm never opened',
} as const satisfies Record<Accelerator | 'auto', string>;

export type Accel = keyof typeof ACCEL_CHOICES;
export const ACCELS = Object.keys(ACCEL_CHOICES) as readonly Accel[];
export const DEFAULT_ACCEL: Accel = 'auto';

export function isAccel(s: string): s is Accel {
  return (ACCELS as readonly string[]).includes(s);
}
