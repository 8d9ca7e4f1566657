// The manifest written into every image (docs/images.md "Real images"): what the caller knows before the build
// (template, distribution, profile, software, settings, format) as plain data, completed by the build
// with the versions actually installed and, when reproducible, how to build the same bytes again. Data,
// not a callback: a build order crosses processes as JSON (the server's job queue).
import { reproducibleRecord, type Reproducible } from './reproducible';
import type { InstalledPackage, OsLayerSpec } from './stages';

/** What the manifest says beyond the OS layer's spec and the installed packages. */
export interface ManifestSpec {
  /** The template (not its uuid: the server draws it, and the image holds only what a rebuild elsewhere gives again). */
  readonly template: { readonly name: string; readonly version: string; readonly description?: string | undefined; readonly revision: number };
  /** The distribution as the catalog names it (`Debian`, `12`). */
  readonly os: { readonly name?: string | undefined; readonly version?: string | undefined };
  /** The template's OS profile: its name and the URI of the base profile it started from. */
  readonly profile: { readonly name: string; readonly standardProfileUri: string };
  /** Each software component with the names of its files. */
  readonly software: ReadonlyArray<{ readonly name: string; readonly version: string; readonly files: readonly string[] }>;
  /** The install profile without password hashes: the manifest is readable by every user of the image. */
  readonly installProfile: unknown;
  readonly targetFormat: string;
}

/** The manifest's text: the template's own packages as installed (pins included), then everything dpkg installed. */
export function renderManifest(spec: ManifestSpec, os: OsLayerSpec, installed: readonly InstalledPackage[], reproducible?: Reproducible): string {
  const byName = new Map(installed.map((p) => [p.name, p]));
  return JSON.stringify(
    {
      template: spec.template,
      os: { name: spec.os.name, version: spec.os.version, suite: os.suite, arch: os.arch, kernel: os.kernel, cloudInit: os.cloudInit, mirror: os.mirror },
      profile: { name: spec.profile.name, base: os.profile, standardProfileUri: spec.profile.standardProfileUri },
      packages: os.packages.map((p) => ({ name: p.name, pinned: p.version || undefined, installed: byName.get(p.name)?.version ?? null })),
      installed,
      software: spec.software,
      installProfile: spec.installProfile,
      targetFormat: spec.targetFormat,
      reproducible: reproducible && reproducibleRecord(os, reproducible),
    },
    null,
    2,
  );
}
