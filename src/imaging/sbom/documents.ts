// The two SBOM documents of an image: SPDX 2.3 JSON (spec 2.3, clauses 6–11) and CycloneDX 1.6 JSON
// (bom-1.6.schema.json). Deterministic: sorted lists, no random id (the SPDX namespace and the
// CycloneDX serial number are a name-based UUID of the image's sha256), `created` given by the caller
// (SOURCE_DATE_EPOCH for a reproducible build), so one image gives the same bytes every time.
import { createHash } from 'node:crypto';
import { SERVICE_VERSION } from '../../version';
import type { ImageContents, SbomPackage } from './contents';
import { NOASSERTION } from './license';

/** The image an SBOM describes. */
export interface SbomSubject {
  /** The image file's name (`web-1.0.qcow2`). */
  readonly fileName: string;
  readonly sha256: string;
  /** Seconds since the epoch. */
  readonly createdEpoch: number;
}

export interface ImageSboms {
  /** Packages listed (the dpkg database's installed packages). */
  readonly packages: number;
  readonly spdx: string;
  readonly cyclonedx: string;
}

const TOOL = 'appliance-forge';
/** RFC 4122 §4.3 name-based UUID (version 5, SHA-1) in the URL namespace. */
const URL_NAMESPACE = Buffer.from('6ba7b8119dad11d180b400c04fd430c8', 'hex');

export function uuidV5(name: string): string {
  const h = createHash('sha1').update(URL_NAMESPACE).update(name, 'utf8').digest().subarray(0, 16);
  h[6] = (h[6]! & 0x0f) | 0x50;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

/** Package URL of a Debian binary package (purl-spec, type `deb`): name, version and qualifiers percent-encoded. */
export function debPurl(p: SbomPackage, distro: ImageContents['distro']): string {
  const vendor = distro?.id ?? 'debian';
  const qualifiers = [`arch=${encodeURIComponent(p.arch)}`, ...(distro ? [`distro=${encodeURIComponent(`${distro.id}-${distro.versionId}`)}`] : [])];
  // ':' needs no encoding in a purl (purl-spec "Character encoding"): an epoch stays readable.
  return `pkg:deb/${encodeURIComponent(vendor)}/${encodeURIComponent(p.name)}@${encodeURIComponent(p.version).replace(/%3A/g, ':')}?${qualifiers.join('&')}`;
}

/** `2026-11-25T10:00:00Z`: SPDX's form (no fraction), also valid for CycloneDX. */
function timestamp(epoch: number): string {
  return new Date(epoch * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** SPDX ids allow letters, digits, `.` and `-` (spec 2.3 §7.2). */
const spdxId = (kind: string, text: string): string => `SPDXRef-${kind}-${text.replace(/[^A-Za-z0-9.-]+/g, '-')}`;

function spdxDocument(c: ImageContents, s: SbomSubject, uuid: string): object {
  const image = 'SPDXRef-Image';
  const ids = new Set<string>();
  const unique = (id: string): string => {
    let u = id;
    for (let n = 2; ids.has(u); n++) u = `${id}-${n}`;
    ids.add(u);
    return u;
  };
  const packages = c.packages.map((p) => ({
    name: p.name,
    SPDXID: unique(spdxId('Package-deb', `${p.name}-${p.arch}`)),
    versionInfo: p.version,
    supplier: NOASSERTION,
    downloadLocation: NOASSERTION,
    filesAnalyzed: false,
    sourceInfo: `built from the source package ${p.source} ${p.sourceVersion}`,
    licenseConcluded: NOASSERTION,
    licenseDeclared: p.license,
    copyrightText: NOASSERTION,
    externalRefs: [{ referenceCategory: 'PACKAGE-MANAGER', referenceType: 'purl', referenceLocator: debPurl(p, c.distro) }],
  }));
  const files = c.files.map((f) => ({
    fileName: `.${f.path}`,
    SPDXID: unique(spdxId('File', f.path.slice(1))),
    checksums: [
      { algorithm: 'SHA1', checksumValue: f.sha1 },
      { algorithm: 'SHA256', checksumValue: f.sha256 },
    ],
    licenseConcluded: NOASSERTION,
    copyrightText: NOASSERTION,
  }));
  return {
    spdxVersion: 'SPDX-2.3',
    dataLicense: 'CC0-1.0',
    SPDXID: 'SPDXRef-DOCUMENT',
    name: s.fileName,
    documentNamespace: `https://spdx.org/spdxdocs/${TOOL}/${encodeURIComponent(s.fileName)}-${uuid}`,
    creationInfo: { created: timestamp(s.createdEpoch), creators: [`Tool: ${TOOL}-${SERVICE_VERSION}`] },
    packages: [
      {
        name: s.fileName,
        SPDXID: image,
        ...(c.distro ? { versionInfo: `${c.distro.id}-${c.distro.versionId}` } : {}),
        downloadLocation: NOASSERTION,
        filesAnalyzed: false,
        checksums: [{ algorithm: 'SHA256', checksumValue: s.sha256 }],
        licenseConcluded: NOASSERTION,
        licenseDeclared: NOASSERTION,
        copyrightText: NOASSERTION,
        primaryPackagePurpose: 'OPERATING_SYSTEM',
      },
      ...packages,
    ],
    files,
    relationships: [
      { spdxElementId: 'SPDXRef-DOCUMENT', relationshipType: 'DESCRIBES', relatedSpdxElement: image },
      ...[...packages, ...files].map((e) => ({ spdxElementId: image, relationshipType: 'CONTAINS', relatedSpdxElement: e.SPDXID })),
    ],
  };
}

function cyclonedxDocument(c: ImageContents, s: SbomSubject, uuid: string): object {
  const image = 'image';
  const components = [
    ...c.packages.map((p) => {
      const purl = debPurl(p, c.distro);
      return {
        type: 'library',
        'bom-ref': purl,
        name: p.name,
        version: p.version,
        purl,
        ...(p.license === NOASSERTION ? {} : { licenses: [{ expression: p.license }] }),
        properties: [
          { name: `${TOOL}:deb:architecture`, value: p.arch },
          { name: `${TOOL}:deb:source`, value: p.source },
          { name: `${TOOL}:deb:source-version`, value: p.sourceVersion },
        ],
      };
    }),
    ...c.files.map((f) => ({
      type: 'file',
      'bom-ref': `file:${f.path}`,
      name: f.path,
      hashes: [
        { alg: 'SHA-1', content: f.sha1 },
        { alg: 'SHA-256', content: f.sha256 },
      ],
    })),
  ];
  return {
    bomFormat: 'CycloneDX',
    specVersion: '1.6',
    serialNumber: `urn:uuid:${uuid}`,
    version: 1,
    metadata: {
      timestamp: timestamp(s.createdEpoch),
      tools: { components: [{ type: 'application', name: TOOL, version: SERVICE_VERSION }] },
      component: {
        type: 'operating-system',
        'bom-ref': image,
        name: s.fileName,
        ...(c.distro ? { version: `${c.distro.id}-${c.distro.versionId}` } : {}),
        hashes: [{ alg: 'SHA-256', content: s.sha256 }],
      },
    },
    components,
    dependencies: [{ ref: image, dependsOn: components.map((x) => x['bom-ref']) }],
  };
}

/** Both documents of an image, as the bytes to store (JSON, two-space indent, final newline). */
export function imageSboms(c: ImageContents, s: SbomSubject): ImageSboms {
  const uuid = uuidV5(`${TOOL}:image:sha256:${s.sha256}`);
  const text = (doc: object): string => `${JSON.stringify(doc, null, 2)}\n`;
  return { packages: c.packages.length, spdx: text(spdxDocument(c, s, uuid)), cyclonedx: text(cyclonedxDocument(c, s, uuid)) };
}
