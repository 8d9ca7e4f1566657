// The image builder (docs/contracts.md "Imaging").
export { imageBuilder, type ImageBuilder, type ImageBuilderOptions, type ImageOrder, type ImageRecipe, type ImageProgress, type BuildStage } from './builder';
export { buildImage, MIN_DISK_MIB, MAX_DISK_MIB, type BuildImageOptions, type BuiltImage } from './build';
export { TARGET_FORMATS, targetFormatByName, imageFileName, type TargetFormatInfo, type DiskFormat } from './formats';
export { MANIFEST_PATH, type ImageFile } from './staging';
export { applySystem, SWAP_FILE, type ApplySystemOptions } from './system-apply';
export { writeBootableRaw, grubConfig, BASE_KERNEL_PARAMS, type BootableRawOptions } from './bootdisk';
export { GRUB_MODULES, EMBEDDED_CONFIG } from './grub';
export { EFI_BOOT_PATH, EFI_CONFIG_PATH, EFI_GRUB_PATH, SIGNED_GRUB, SIGNED_SHIM } from './esp';
export { copyTree } from './tree';
export type { SystemSettings, SystemUser, SystemGroup, SshKey } from './system';
export { BIOS_BOOT_OFFSET, ESP_OFFSET, ESP_MIB, ROOT_OFFSET, GPT_TYPE } from './gpt';
export { ImagingError, isImagingError, type ImagingErrorKind } from './errors';
export type { BuildProgress } from './progress';
export { defaultCacheDir } from './cache-dir';
export { kernelFor, osLayerSpecOf, settingsPackages } from './recipe';
export { buildOsLayer, defaultMirror, validateMirror, type OsLayer, type OsLayerOptions } from './os';
export type { InstalledPackage, KernelFlavour, MirrorConfig, OsLayerSpec, PackageRequest } from './system';
export { reproducibleRecord, type Reproducible, type ReproducibleRecord } from './reproducible';
