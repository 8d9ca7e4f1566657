// The package version (the service's `version` header too) (`version` header, serviceStatus.version): the package's own version, found
// by walking up from this file (works from src/ under vitest and from dist/src/ once built), or set
// at build time in the Action's bundle, which runs with no package.json above it.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

function findVersion(): string {
  let dir = __dirname;
  for (let i = 0; i < 6; i++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'appliance-forge' && pkg.version) return pkg.version;
    } catch {
      // not here: keep walking up
    }
    dir = dirname(dir);
  }
  return '0.0.0';
}

declare const APPLIANCE_FORGE_VERSION: string | undefined;

export const SERVICE_VERSION = typeof APPLIANCE_FORGE_VERSION === 'string' ? APPLIANCE_FORGE_VERSION : findVersion();
