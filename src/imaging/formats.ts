// The target formats the reference server offers (wire contract §8): chosen by display name; only those
// with a `credAccountType` can be published. `disk` is the container written by `buildImage`.

export type DiskFormat = 'raw' | 'qcow2' | 'vmdk' | 'vhd' | 'vdi';

export interface TargetFormatInfo {
  readonly name: string;
  readonly type: 'cloud' | 'virtual';
  readonly credAccountType?: 'openstack';
  readonly disk: DiskFormat;
  /** File name extension of the disk, without the dot (a compressed image adds `.gz`). */
  readonly extension: string;
  /** Glance `disk_format` used when the image is published. */
  readonly glanceDiskFormat?: 'qcow2' | 'vmdk' | 'vhd' | 'vdi';
}

export const TARGET_FORMATS: readonly TargetFormatInfo[] = [
  { name: 'OpenStack QCOW2', type: 'cloud', credAccountType: 'openstack', disk: 'qcow2', extension: 'qcow2', glanceDiskFormat: 'qcow2' },
  { name: 'OpenStack VMDK', type: 'cloud', credAccountType: 'openstack', disk: 'vmdk', extension: 'vmdk', glanceDiskFormat: 'vmdk' },
  { name: 'OpenStack VHD', type: 'cloud', credAccountType: 'openstack', disk: 'vhd', extension: 'vhd', glanceDiskFormat: 'vhd' },
  { name: 'OpenStack VDI', type: 'cloud', credAccountType: 'openstack', disk: 'vdi', extension: 'vdi', glanceDiskFormat: 'vdi' },
  { name: 'QCOW2', type: 'virtual', disk: 'qcow2', extension: 'qcow2' },
  { name: 'Raw Virtual Disk', type: 'virtual', disk: 'raw', extension: 'raw' },
  { name: 'VMware', type: 'virtual', disk: 'vmdk', extension: 'vmdk' },
  { name: 'VirtualBox', type: 'virtual', disk: 'vdi', extension: 'vdi' },
  { name: 'VHD', type: 'virtual', disk: 'vhd', extension: 'vhd' },
];

/** Display names compare case-insensitively, as `targetPlatform.name` does (wire contract §9). */
export function targetFormatByName(name: string): TargetFormatInfo | undefined {
  const wanted = name.trim().toLowerCase();
  return TARGET_FORMATS.find((f) => f.name.toLowerCase() === wanted);
}

/** `web-1.qcow2`, or `web-1.qcow2.gz` when compressed: the gzip layer shows in the name. */
export function imageFileName(baseName: string, format: TargetFormatInfo, compress: boolean): string {
  return `${baseName}.${format.extension}${compress ? '.gz' : ''}`;
}
