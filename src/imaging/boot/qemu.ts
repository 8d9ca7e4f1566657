// Running qemu-system-x86_64 for a boot check: its own process group (killed as a whole: QEMU and
// anything it started), the serial console on stdin/stdout, and no QEMU left behind when the check
// ends, fails, or this Node process exits.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { QEMU_FORMAT, type ImageFormat } from './image';

export interface QemuOptions {
  readonly image: string;
  readonly format: ImageFormat;
  readonly memoryMiB: number;
  /** 'user': a user-mode NIC (DHCP and outbound NAT, no forwarding from the host); 'none': no NIC. */
  readonly network: 'none' | 'user';
}

/**
 * The disk as QEMU block options: the format named (QEMU never probes), the protocol `file` named (a
 * path never reads as `nbd:…`), and `backing: null`, so no backing file is opened whatever the header
 * says. Given to `-drive` as a `json:` filename, where `snapshot=on` still applies; commas are doubled.
 */
function driveSpec(o: Pick<QemuOptions, 'image' | 'format'>): string {
  const blockdev = { driver: QEMU_FORMAT[o.format], backing: null, file: { driver: 'file', filename: path.resolve(o.image) } };
  return `file=json:${JSON.stringify(blockdev).replace(/,/g, ',,')},if=virtio,snapshot=on`;
}

/**
 * TCG, not KVM: /dev/kvm exists on the build hosts but does not work there (docs/design/real-images.md).
 * `-nodefaults` drops the default VGA, monitor, NIC and drives; the serial port is the only device we talk to.
 * `snapshot=on`: writes go to a temporary overlay, the image is never modified.
 */
export function qemuArgs(o: QemuOptions): string[] {
  return [
    '-accel', 'tcg',
    '-m', String(o.memoryMiB),
    '-nodefaults',
    '-display', 'none',
    '-serial', 'stdio',
    '-drive', driveSpec(o),
    ...(o.network === 'user' ? ['-nic', 'user,model=virtio-net-pci'] : ['-nic', 'none']),
  ];
}

const MAX_STDERR = 16 * 1024;
const running = new Set<ChildProcess>();

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    child.kill('SIGKILL');
  }
}

// Last resort: a QEMU still running when Node exits (an uncaught exception, process.exit) is killed.
let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const c of running) killGroup(c);
  });
}

export interface QemuExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** The last bytes QEMU wrote on stderr (its own error messages). */
  readonly stderr: string;
}

export interface QemuProcess {
  readonly pid: number;
  /** Bytes for the guest's serial port. */
  write(text: string): void;
  /** Settles when QEMU has exited (never rejects). */
  readonly exited: Promise<QemuExit>;
  /** SIGKILL to the process group; resolves once QEMU is gone. */
  kill(): Promise<QemuExit>;
}

export function startQemu(o: QemuOptions, onConsole: (bytes: Buffer) => void): QemuProcess {
  installExitHook();
  const child = spawn('qemu-system-x86_64', qemuArgs(o), { detached: true, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, LC_ALL: 'C' } });
  running.add(child);
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (s: string) => {
    stderr = (stderr + s).slice(-MAX_STDERR);
  });
  child.stdout.on('data', onConsole);
  // A write after the guest is gone is not an error worth crashing for: the exit is reported instead.
  child.stdin.on('error', () => undefined);
  const exited = new Promise<QemuExit>((resolve) => {
    const done = (code: number | null, signal: NodeJS.Signals | null): void => {
      running.delete(child);
      resolve({ code, signal, stderr: stderr.trim() });
    };
    child.on('error', (e) => {
      stderr += `${e.message}\n`;
      if (child.pid === undefined) done(null, null);
    });
    child.on('close', done);
  });
  return {
    pid: child.pid ?? -1,
    write: (text) => {
      if (child.stdin.writable) child.stdin.write(text);
    },
    exited,
    kill: () => {
      killGroup(child);
      return exited;
    },
  };
}
