// Running the platform's QEMU (model/platforms.ts) for a boot check: its own process group (killed as a whole: QEMU and
// anything it started), the serial console on stdin/stdout, no QEMU left behind when the check ends,
// fails, or this Node process exits, and confined (host/confine.ts) to the image, read only, and the
// check's private folders: whatever the image's metadata names, QEMU can open no other file of the host.
import path from 'node:path';
import { start, type ChildExit } from '../../host/child';
import { DEFAULT_PLATFORM } from '../../model/platforms';
import { confinedPrefix, type ConfineSpec } from '../../host/confine';
import type { Accelerator } from './accel-choice';
import { firmwareArgs, type FirmwareSetup } from './firmware';
import type { ImageFormat } from './image-format';
import { blockdevOf } from './qemu-img';
import { USER_NETWORK } from './user-network';

export interface QemuOptions {
  readonly image: string;
  readonly format: ImageFormat;
  readonly memoryMiB: number;
  /** 'user': a user-mode NIC (DHCP and outbound NAT); 'none': no NIC. */
  readonly network: 'none' | 'user';
  /** With 'user': host ports on 127.0.0.1 forwarded to guest TCP ports (a readiness probe). */
  readonly forwards?: ReadonlyArray<{ readonly hostPort: number; readonly guestPort: number }>;
  /** The direct-kernel path: QEMU loads these itself, no firmware boot menu or boot loader. */
  readonly kernel?: { readonly kernel: string; readonly initrd: string; readonly append: string } | undefined;
  /** Virtual CPUs; more than one runs TCG multi-threaded. Default 1. */
  readonly cpus?: number;
  /** Default SeaBIOS. */
  readonly firmware?: FirmwareSetup | undefined;
  /** The accelerator (accel.ts chooses it); default TCG. */
  readonly accel?: Accelerator | undefined;
}

/**
 * The disk as QEMU block options (qemu-img.ts): the format named (QEMU never probes), the protocol
 * `file` named, and `backing: null`, so no backing file is opened whatever the header says. Given to
 * `-drive` as a `json:` filename, where `snapshot=on` still applies (the image is opened read only, the
 * guest's writes go to a temporary overlay in $TMPDIR); commas are doubled.
 */
function driveSpec(o: Pick<QemuOptions, 'image' | 'format'>): string {
  return `file=json:${JSON.stringify(blockdevOf(path.resolve(o.image), o.format)).replace(/,/g, ',,')},if=virtio,snapshot=on`;
}

/**
 * The accelerator and CPU model, for a boot and for accel.ts's probe alike.
 * `qemu64,+rdrand` under both: QEMU's default model plus RDRAND, which the kernel trusts, so its random
 * pool is ready at once instead of ~20 s into a TCG boot (jitter entropy spun on the one vCPU until then).
 * Under KVM the same named model, not `-cpu host`: `-cpu host` aborts QEMU on a build host kind whose
 * /dev/kvm is broken (docs/design/real-images.md), and a named model behaves the same on every host.
 */
export function accelArgs(accel: Accelerator, cpus: number): string[] {
  const engine = accel === 'kvm' ? 'kvm' : cpus > 1 ? 'tcg,thread=multi' : 'tcg';
  return ['-accel', engine, ...(cpus > 1 ? ['-smp', String(cpus)] : []), '-cpu', DEFAULT_PLATFORM.qemu.cpu];
}

/**
 * `-nodefaults` drops the default VGA, monitor, NIC and drives; the serial port is the only device we talk to.
 * `snapshot=on`: writes go to a temporary overlay, the image is never modified.
 * The NIC has no option ROM: the firmware would load and start iPXE, which no check boots from. Its
 * addresses are QEMU's defaults, named (user-network.ts): the fast path's static `ip=` word relies on them.
 */
export function qemuArgs(o: QemuOptions): string[] {
  const cpus = o.cpus ?? 1;
  const forwards = (o.forwards ?? []).map((f) => `,hostfwd=tcp:127.0.0.1:${f.hostPort}-:${f.guestPort}`).join('');
  const u = USER_NETWORK;
  const nic = ['-netdev', `user,id=net0,net=${u.net},host=${u.host},dns=${u.dns},dhcpstart=${u.guest}${forwards}`, '-device', 'virtio-net-pci,netdev=net0,romfile='];
  return [
    ...accelArgs(o.accel ?? 'tcg', cpus),
    ...firmwareArgs(o.firmware ?? { kind: 'bios' }),
    '-m', String(o.memoryMiB),
    '-nodefaults',
    '-display', 'none',
    '-serial', 'stdio',
    '-drive', driveSpec(o),
    ...(o.network === 'user' ? nic : ['-nic', 'none']),
    ...(o.kernel ? ['-kernel', o.kernel.kernel, '-initrd', o.kernel.initrd, '-append', o.kernel.append] : []),
  ];
}

/** QEMU's exit: `stderr` holds the last bytes it wrote there (its own error messages). */
export type QemuExit = ChildExit;

export interface QemuProcess {
  readonly pid: number;
  /** Bytes for the guest's serial port. */
  write(text: string): void;
  /** Settles when QEMU has exited (never rejects). */
  readonly exited: Promise<QemuExit>;
  /** SIGKILL to the process group; resolves once QEMU is gone. */
  kill(): Promise<QemuExit>;
}

/**
 * QEMU in a process group of its own, killed as a whole, and with this process (host/child.ts),
 * confined by `confine` (which holds the image, the firmware's and kernel's files, and `tmp`, a
 * writable folder for snapshot=on's overlay).
 */
export function startQemu(o: QemuOptions, confine: ConfineSpec & { readonly tmp: string }, onConsole: (bytes: Buffer) => void): QemuProcess {
  const child = start({ command: DEFAULT_PLATFORM.qemu.binary, args: qemuArgs(o), within: confinedPrefix(confine), env: { TMPDIR: confine.tmp }, group: true, interactive: true });
  child.stdout.on('data', onConsole);
  const exited = child.exited.then(({ error, ...x }): QemuExit => (error ? { ...x, stderr: `${x.stderr}\n${error.message}`.trim() } : x));
  return { pid: child.pid ?? -1, write: (text) => child.write(text), exited, kill: () => child.kill().then(() => exited) };
}
