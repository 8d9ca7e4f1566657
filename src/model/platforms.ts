// The machine architectures an image can be built for, one record each (mkosi's `Architecture=` with its
// per-architecture boot tables): every stage of a build and of a boot check reads what differs between
// them here, and nowhere else names an architecture's files, packages or numbers. Facts of the records:
// Debian's package names and file paths (Debian 12 and 13), the Discoverable Partitions Specification's
// root partition types, and docs/images.md.

export interface Platform {
  /** The name on the wire and in declarations (`uname -m`). */
  readonly name: string;
  /** Debian's name for it: dpkg, mmdebstrap `--architectures`, the archive's `binary-ARCH` indexes. */
  readonly debianArch: string;
  /** The kernel package of each flavour (imaging/stages.ts's KernelFlavour). */
  readonly kernels: { readonly cloud: string; readonly generic: string };
  /** GPT type GUID of the root partition ("Linux root" of this architecture). */
  readonly rootPartitionType: string;
  /** Booting from a BIOS: GRUB's BIOS image in a BIOS boot partition; undefined where there is no BIOS (UEFI only). */
  readonly bios?: {
    /** The host's GRUB for BIOS: its modules, kernel.img and boot.img. */
    readonly grubDir: string;
    /** `grub-mkimage -O`. */
    readonly grubFormat: string;
  };
  /** Booting from UEFI: Debian's signed boot chain on the ESP. */
  readonly efi: {
    /** The removable-media path firmware boots without an NVRAM entry (shim goes there). */
    readonly bootPath: string;
    /** Signed GRUB beside shim: shim loads it by this name from its own folder. */
    readonly grubPath: string;
    /** shim signed by Microsoft, and GRUB signed by Debian, as the host's packages install them. */
    readonly signedShim: string;
    readonly signedGrub: string;
  };
  /** The serial console a boot check and the kernel's command line use. */
  readonly console: string;
  /** The QEMU that boots it, its machine and CPU models under TCG. */
  readonly qemu: { readonly binary: string; readonly machine: string; readonly cpu: string };
}

export const PLATFORMS = {
  x86_64: {
    name: 'x86_64',
    debianArch: 'amd64',
    kernels: { cloud: 'linux-image-cloud-amd64', generic: 'linux-image-amd64' },
    rootPartitionType: '4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709',
    bios: { grubDir: '/usr/lib/grub/i386-pc', grubFormat: 'i386-pc' },
    efi: {
      bootPath: 'EFI/BOOT/BOOTX64.EFI',
      grubPath: 'EFI/BOOT/grubx64.efi',
      signedShim: '/usr/lib/shim/shimx64.efi.signed',
      signedGrub: '/usr/lib/grub/x86_64-efi-signed/grubx64.efi.signed',
    },
    console: 'ttyS0',
    qemu: { binary: 'qemu-system-x86_64', machine: 'pc', cpu: 'qemu64,+rdrand' },
  },
  aarch64: {
    name: 'aarch64',
    debianArch: 'arm64',
    kernels: { cloud: 'linux-image-cloud-arm64', generic: 'linux-image-arm64' },
    rootPartitionType: 'B921B045-1DF0-41C3-AF44-4C6F280D3FAE',
    efi: {
      bootPath: 'EFI/BOOT/BOOTAA64.EFI',
      grubPath: 'EFI/BOOT/grubaa64.efi',
      signedShim: '/usr/lib/shim/shimaa64.efi.signed',
      signedGrub: '/usr/lib/grub/arm64-efi-signed/grubaa64.efi.signed',
    },
    console: 'ttyAMA0',
    // cortex-a72: pointer authentication makes `max` several times slower under TCG (docs/images.md).
    qemu: { binary: 'qemu-system-aarch64', machine: 'virt', cpu: 'cortex-a72' },
  },
} as const satisfies Record<string, Platform>;

export type PlatformName = keyof typeof PLATFORMS;

/** What every build makes today: the images are x86-64 until the build stages take the platform from the order. */
export const DEFAULT_PLATFORM = PLATFORMS.x86_64;

/** The platform of a Debian architecture name (`amd64`, `arm64`); undefined for one this table lacks. */
export function platformOfDebianArch(arch: string): Platform | undefined {
  return Object.values(PLATFORMS).find((p) => p.debianArch === arch);
}
