// What the direct-kernel path adds to the image's own kernel command line (QEMU's -append only; the
// image is never changed): seven gettys fewer competing with udev and nginx for the one vCPU, on
// consoles (tty1..6) that have no display under -nodefaults; the serial console keeps its getty. They
// change which units run, so a caller can boot without them (`fastParams: false`, `boot --no-fast-params`).
// Measured and left out: mitigations=off (the kernel reached /init later with it, four pairs of four).
export const FAST_KERNEL_PARAMS = [
  'systemd.mask=getty-static.service',
  'systemd.mask=getty@tty1.service',
] as const;

/** The command line QEMU gives the kernel: the image's own, then the fast-path words unless turned off. */
export function directCommandLine(imageCommandLine: string, fast: boolean): string {
  return fast ? [imageCommandLine, ...FAST_KERNEL_PARAMS].join(' ') : imageCommandLine;
}
