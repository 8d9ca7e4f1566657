// SBOMs of an image (docs/images.md "SBOMs"): its contents read safely from the tree, then SPDX 2.3 and CycloneDX 1.6 JSON.
export { readImageContents, readTreeContents, listedFiles, type ImageContents, type SbomPackage, type SbomFile } from './contents';
export { imageSboms, debPurl, type ImageSboms, type SbomSubject } from './documents';
export { parseDpkgStatus, DPKG_STATUS, type DebPackage } from './dpkg';
export { licenseOf, NOASSERTION } from './license';
