// The disk formats written by `qemu-img convert` (Debian qemu-utils): VMDK, VHD (qemu's `vpc`), VDI.
// The input format is always given (`-f raw`): qemu-img never probes a file it did not write.
import { runTool } from '../run';

export type QemuDisk = 'vmdk' | 'vhd' | 'vdi' | 'qcow2';

function outputArgs(disk: QemuDisk): string[] {
  switch (disk) {
    case 'vmdk':
      // streamOptimized: the one VMDK that ESXi, vCenter's OVF import and Glance all take (monolithicSparse loads corrupted on ESXi).
      return ['-O', 'vmdk', '-o', 'subformat=streamOptimized'];
    case 'vhd':
      // Fixed, as Azure requires; force_size keeps the virtual size exact (a whole number of MiB),
      // where qemu would otherwise round it to a CHS geometry.
      return ['-O', 'vpc', '-o', 'subformat=fixed,force_size=on'];
    case 'vdi':
      return ['-O', 'vdi'];
    case 'qcow2':
      return ['-O', 'qcow2'];
  }
}

/** Convert a raw disk; `onFraction` gets qemu-img's own progress (`-p` prints "(12.50/100%)"). */
export async function qemuConvert(
  rawPath: string,
  outPath: string,
  disk: QemuDisk,
  opts: { signal?: AbortSignal | undefined; onFraction?: (f: number) => void } = {},
): Promise<void> {
  await runTool('qemu-img', ['convert', '-p', '-f', 'raw', ...outputArgs(disk), rawPath, outPath], {
    signal: opts.signal,
    onStdout: (text) => {
      const all = [...text.matchAll(/\((\d+(?:\.\d+)?)\/100%\)/g)];
      const last = all[all.length - 1];
      if (last) opts.onFraction?.(Math.min(1, Number(last[1]) / 100));
    },
  });
}
