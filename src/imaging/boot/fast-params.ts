// What the direct-kernel path adds to the image's own kernel command line (QEMU's -append only; the
// image is never changed). Under TCG every unit started and every console byte (a trapped UART write)
// costs the one vCPU, so the fast path boots with:
// - no gettys on tty1..6 (no display under -nodefaults; the serial console keeps its getty);
// - the kernel's informational messages and systemd's copies of its log off the console: notices stay
//   (the kernel's `Kernel command line:`), warnings and errors stay, and systemd shows unit status only
//   once a job is slow or fails (`auto`), so a stuck or failed boot still explains itself;
// - no drm module (no display), no debugfs or tracefs mount.
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
] as const;

/** The command line QEMU gives the kernel: the image's own, then the fast-path words unless turned off. */
export function directCommandLine(imageCommandLine: string, fast: boolean): string {
  return fast ? [imageCommandLine, ...FAST_KERNEL_PARAMS].join(' ') : imageCommandLine;
}
