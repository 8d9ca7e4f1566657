// The disk formats the boot check and `diff` take, and QEMU's name of each.

export const IMAGE_FORMATS = ['qcow2', 'raw', 'vmdk', 'vhd', 'vdi'] as const;
export type ImageFormat = (typeof IMAGE_FORMATS)[number];

/** QEMU's name of each format (VHD is qemu's `vpc`). */
export const QEMU_FORMAT: Readonly<Record<ImageFormat, string>> = { qcow2: 'qcow2', raw: 'raw', vmdk: 'vmdk', vhd: 'vpc', vdi: 'vdi' };

export function isImageFormat(s: string): s is ImageFormat {
  return (IMAGE_FORMATS as readonly string[]).includes(s);
}
