// Where the OS layers and downloaded packages are kept between builds (and between servers: the
// cache is safe to share). One default for `serve`, the embedded server of `apply` and the tests.
import { homedir } from 'node:os';
import { join } from 'node:path';

/** `APPLIANCE_FORGE_CACHE_DIR`, else `/var/cache/appliance-forge` as root, else `~/.cache/appliance-forge`. */
export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const set = env.APPLIANCE_FORGE_CACHE_DIR;
  if (set) return set;
  if (process.getuid?.() === 0) return '/var/cache/appliance-forge';
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'appliance-forge');
}

/**
 * `APPLIANCE_FORGE_LAYER_ARCHIVE_DIR`: a folder of OS layer archives (os/folder-tier.ts) that builds
 * restore from and add to, for a CI cache step to keep between runs; undefined when unset.
 */
export function layerArchiveDir(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return env.APPLIANCE_FORGE_LAYER_ARCHIVE_DIR || undefined;
}
