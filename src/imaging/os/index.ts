// Stage 1 of a real image build: the Debian root tree (see ../stages.ts for the contract).
export { OsLayerCache, buildOsLayer, layerKey, sharedLayerKey, diskUsage, DEFAULT_MAX_BYTES } from './cache';
export { parseSharedLayerMeta, SharedLayerError } from './shared-tier';
export { packLayer, unpackLayer } from './layer-archive';
export { folderLayerTier } from './folder-tier';
export type { SharedLayerMeta, SharedLayerTier } from './shared-tier';
export type { OsLayer, OsLayerOptions, OsLayerCacheOptions } from './cache';
export { defaultMirror, validateMirror, DEFAULT_MIRROR } from './mirror';
export type { OsLayerPhase, OsLayerProgress } from './progress';
export { checkPrerequisites } from './mmdebstrap';
