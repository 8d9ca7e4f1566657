// What a format and an install profile add to the OS layer (docs/images.md "Real images"): the kernel
// flavour, cloud-init, and the packages the settings need to take effect.
import { DEFAULT_PLATFORM } from '../model/platforms';
import type { DiskFormat } from './formats';
import type { KernelFlavour, OsLayerSpec, PackageRequest, SystemSettings } from './stages';

/**
 * The cloud kernel (a third of the generic kernel's size) has the drivers of KVM, Xen and
 * Hyper-V clouds; VMware and VirtualBox machines (VMDK, VDI) get the generic kernel, whose drivers
 * cover their emulated controllers and network cards.
 */
export function kernelFor(disk: DiskFormat): KernelFlavour {
  return disk === 'vmdk' || disk === 'vdi' ? 'generic' : 'cloud';
}

/** Packages the settings need: an ssh server where keys are declared or cloud-init hands out key pairs, console-setup for a keyboard layout. */
export function settingsPackages(settings: SystemSettings, cloudInit: boolean): string[] {
  const keys = settings.rootUser.sshKeys.length > 0 || settings.users.some((u) => u.sshKeys.length > 0);
  return [...(keys || cloudInit ? ['openssh-server'] : []), ...(settings.keyboard ? ['console-setup'] : [])];
}

export interface LayerRequest {
  readonly suite: string;
  readonly profile: string;
  readonly packages: readonly PackageRequest[];
  readonly disk: DiskFormat;
  readonly cloudInit: boolean;
  readonly settings: SystemSettings;
  readonly mirror: OsLayerSpec['mirror'];
  readonly partition?: string | undefined;
}

/** The OsLayerSpec of an image: the template's packages plus what the format and the settings need. */
export function osLayerSpecOf(r: LayerRequest): OsLayerSpec {
  const asked = new Set(r.packages.map((p) => p.name));
  const extra = settingsPackages(r.settings, r.cloudInit).filter((n) => !asked.has(n));
  return {
    suite: r.suite,
    arch: DEFAULT_PLATFORM.debianArch,
    profile: r.profile === 'Standard' ? 'Standard' : 'Minimal',
    packages: [...r.packages, ...extra.map((name) => ({ name }))].sort((a, b) => a.name.localeCompare(b.name)),
    kernel: kernelFor(r.disk),
    cloudInit: r.cloudInit,
    mirror: r.mirror,
    partition: r.partition,
  };
}
