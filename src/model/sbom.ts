// The SBOM documents kept beside every image (docs/images.md "SBOMs"): one row per format, read by the build's
// server (storage, the extension route's content type), the client and `apply --output` (file names).

export const SBOM_FORMATS = [
  /** SPDX 2.3 JSON (SPDX 2.3 Annex "SPDX File Type": application/spdx+json). */
  { id: 'spdx', suffix: '.spdx.json', mediaType: 'application/spdx+json' },
  /** CycloneDX 1.6 JSON (IANA: application/vnd.cyclonedx+json). */
  { id: 'cyclonedx', suffix: '.cdx.json', mediaType: 'application/vnd.cyclonedx+json' },
] as const;

export type SbomFormat = (typeof SBOM_FORMATS)[number]['id'];

export function sbomFormat(id: string | undefined): (typeof SBOM_FORMATS)[number] | undefined {
  return SBOM_FORMATS.find((f) => f.id === id);
}
