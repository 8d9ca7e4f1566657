// The OS layer cache's size bounds, apart from the cache so that a command's flags and a server's
// options can name them without loading it.

/** The cache's default bound: layers, downloaded .deb files and trees being built. */
export const DEFAULT_MAX_BYTES = 8 * 1024 ** 3;
/**
 * Room a new layer is assumed to need before it is built (its tree and the .deb files it downloads):
 * a Minimal layer with the cloud kernel takes about half of it. The largest cached layer counts
 * instead when it is bigger (a Standard profile), and never more than the bound itself.
 */
export const NEW_LAYER_BYTES = 768 * 1024 ** 2;

/** A build in memory copies every kept .deb file into its tree's archive: past this much, it is built on disk. */
export const MAX_DEBS_COPIED = 1024 ** 3;
