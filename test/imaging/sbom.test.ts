// SBOMs of an image: read from a real Debian tree (the shared OS layer cache's bookworm Minimal +
// nginx + openssh-server, as system.test.ts builds it), checked against dpkg-query's own reading of
// the same database, validated against the CycloneDX 1.6 schemas that @cyclonedx/cyclonedx-library
// ships and against the SPDX 2.3 rules below; and the hostile trees a template could leave.
import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOsLayer, type OsLayer } from '../../src/imaging';
import { isImagingError } from '../../src/imaging/errors';
import { imageSboms, licenseOf, parseDpkgStatus, readImageContents, type ImageContents } from '../../src/imaging/sbom';
import { MAX_STATUS_BYTES } from '../../src/imaging/sbom/contents';
import { requireBuildPrerequisites, scratch, spec, TEST_CACHE } from './os/helpers';
import { cyclonedxValidator, spdxValidator } from '../support/sbom-schemas';

interface SpdxDoc {
  packages: Array<{ SPDXID: string; name: string; versionInfo?: string; licenseDeclared?: string; externalRefs?: Array<{ referenceLocator: string }> }>;
  files: Array<{ fileName: string; checksums: Array<{ algorithm: string; checksumValue: string }> }>;
  relationships: Array<{ spdxElementId: string; relatedSpdxElement: string }>;
  documentNamespace: string;
  creationInfo: { created: string };
}
interface CdxDoc {
  serialNumber: string;
  metadata: { timestamp: string; component: { hashes: Array<{ content: string }> } };
  components: Array<{ type: string; name: string; version?: string; purl?: string; 'bom-ref': string }>;
}

let layer: OsLayer;
const tmp = scratch('sbom');
let contents: ImageContents;
const SUBJECT = { fileName: 'web-1.0.qcow2', sha256: 'ab'.repeat(32), createdEpoch: 1_700_000_000 };

beforeAll(async () => {
  requireBuildPrerequisites();
  layer = await buildOsLayer(spec({ packages: [{ name: 'nginx' }, { name: 'openssh-server' }] }), { cacheDir: TEST_CACHE });
  writeFileSync(join(tmp.path, 'tool'), '#!/bin/sh\necho tool\n');
  contents = await readImageContents(layer.dir, [{ source: join(tmp.path, 'tool'), destination: '/opt/web/bin/tool' }]);
}, 900_000);
afterAll(async () => {
  await layer?.release();
  tmp.cleanup();
});

describe('the packages of a real Debian tree', () => {
  it('are those dpkg-query lists, at the same versions, with source packages', () => {
    const admin = join(layer.dir, 'var/lib/dpkg');
    const count = execFileSync('sh', ['-c', `dpkg-query --admindir='${admin}' -W | wc -l`], { encoding: 'utf8' }).trim();
    expect(contents.packages.length).toBe(Number(count));
    const theirs = execFileSync('dpkg-query', [`--admindir=${admin}`, '-W', '-f', '${Package} ${Version} ${Architecture} ${source:Package} ${source:Version}\n'], { encoding: 'utf8' })
      .trim().split('\n').sort();
    expect(contents.packages.map((p) => `${p.name} ${p.version} ${p.arch} ${p.source} ${p.sourceVersion}`).sort()).toEqual(theirs);
    expect(contents.distro).toEqual({ id: 'debian', versionId: '12' });
  });

  it('take their licence from machine-readable copyright files only', () => {
    const byName = new Map(contents.packages.map((p) => [p.name, p.license]));
    // DEP-5 files naming one clear licence (grep: GPL-3+, zlib: Zlib, adduser: GPL-2+).
    expect([byName.get('grep'), byName.get('zlib1g'), byName.get('adduser')]).toEqual(['GPL-3.0-or-later', 'Zlib', 'GPL-2.0-or-later']);
    // libc6's file is not machine-readable; bash's and nginx's name licences without an SPDX id (a Bison exception, public-domain).
    expect([byName.get('libc6'), byName.get('bash'), byName.get('nginx')]).toEqual(['NOASSERTION', 'NOASSERTION', 'NOASSERTION']);
    expect(contents.packages.filter((p) => p.license !== 'NOASSERTION').length).toBeGreaterThan(10);
  });
});

describe('the documents', () => {
  it('validate: CycloneDX 1.6 against its official schema, SPDX 2.3 against the rules above', () => {
    const s = imageSboms(contents, SUBJECT);
    expect(cyclonedxValidator()(JSON.parse(s.cyclonedx))).toEqual([]);
    expect(spdxValidator()(JSON.parse(s.spdx))).toEqual([]);
    // The validators do refuse: a component without a name, a package with an unknown field.
    const badCdx = JSON.parse(s.cyclonedx) as CdxDoc;
    delete (badCdx.components[0] as Partial<CdxDoc['components'][number]>).name;
    expect(cyclonedxValidator()(badCdx)).not.toEqual([]);
    const badSpdx = JSON.parse(s.spdx) as { packages: object[] };
    badSpdx.packages[1] = { ...badSpdx.packages[1], arch: 'amd64' };
    expect(spdxValidator()(badSpdx)).not.toEqual([]);
  });

  it('list every package with its purl, and the software files with their digests', () => {
    const s = imageSboms(contents, SUBJECT);
    expect(s.packages).toBe(contents.packages.length);
    const spdx = JSON.parse(s.spdx) as SpdxDoc;
    const cdx = JSON.parse(s.cyclonedx) as CdxDoc;
    const nginx = contents.packages.find((p) => p.name === 'nginx')!;
    const purl = `pkg:deb/debian/nginx@${nginx.version.replace(/\+/g, '%2B')}?arch=amd64&distro=debian-12`;
    expect(spdx.packages.find((p) => p.name === 'nginx')?.externalRefs?.[0]?.referenceLocator).toBe(purl);
    expect(cdx.components.find((c) => c.name === 'nginx')).toMatchObject({ version: nginx.version, purl });
    expect(spdx.packages).toHaveLength(contents.packages.length + 1);
    expect(cdx.components.filter((c) => c.type === 'library')).toHaveLength(contents.packages.length);
    const sha256 = execFileSync('sha256sum', [join(tmp.path, 'tool')], { encoding: 'utf8' }).split(' ')[0];
    expect(spdx.files).toEqual([expect.objectContaining({ fileName: './opt/web/bin/tool', checksums: expect.arrayContaining([{ algorithm: 'SHA256', checksumValue: sha256 }]) as unknown })]);
    expect(cdx.components.find((c) => c.type === 'file')).toMatchObject({ name: '/opt/web/bin/tool', hashes: expect.arrayContaining([{ alg: 'SHA-256', content: sha256 }]) as unknown });
    expect(cdx.metadata.component.hashes).toEqual([{ alg: 'SHA-256', content: SUBJECT.sha256 }]);
    // Everything is reachable from the image: one CONTAINS per package and file.
    expect(spdx.relationships.filter((r) => r.spdxElementId === 'SPDXRef-Image')).toHaveLength(contents.packages.length + 1);
  });

  it('are the same bytes for the same image and time, and name the image by its digest', () => {
    const a = imageSboms(contents, SUBJECT);
    expect(imageSboms(contents, SUBJECT)).toEqual(a);
    const spdx = JSON.parse(a.spdx) as SpdxDoc;
    const cdx = JSON.parse(a.cyclonedx) as CdxDoc;
    expect(spdx.creationInfo.created).toBe('2023-11-14T22:13:20Z');
    expect(cdx.metadata.timestamp).toBe('2023-11-14T22:13:20Z');
    const other = imageSboms(contents, { ...SUBJECT, sha256: 'cd'.repeat(32) });
    expect(JSON.parse(other.cyclonedx).serialNumber).not.toBe(cdx.serialNumber);
    expect(JSON.parse(other.spdx).documentNamespace).not.toBe(spdx.documentNamespace);
    expect(cdx.serialNumber).toMatch(/^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});

/** A minimal tree: os-release and a dpkg status of `text`. */
function tree(label: string, status?: string): string {
  const root = join(tmp.path, label);
  mkdirSync(join(root, 'var/lib/dpkg'), { recursive: true });
  mkdirSync(join(root, 'usr/lib'), { recursive: true });
  writeFileSync(join(root, 'usr/lib/os-release'), 'ID=debian\nVERSION_ID="13"\n');
  if (status !== undefined) writeFileSync(join(root, 'var/lib/dpkg/status'), status);
  return root;
}
const STANZA = 'Package: hello\nStatus: install ok installed\nArchitecture: amd64\nSource: hello-src (2.10-1)\nVersion: 2.10-1+b1\n';

async function refusal(root: string): Promise<string> {
  const e: unknown = await readImageContents(root, []).then(() => undefined, (x: unknown) => x);
  expect(isImagingError(e, 'input'), String(e)).toBe(true);
  return (e as Error).message;
}

describe('a hostile tree', () => {
  it('a status that is a link out of the tree is refused, never followed', async () => {
    const root = tree('link');
    writeFileSync(join(tmp.path, 'outside-status'), STANZA);
    symlinkSync(join(tmp.path, 'outside-status'), join(root, 'var/lib/dpkg/status'));
    expect(await refusal(root)).toMatch(/dpkg database .* not a regular file/);
  });

  it('an oversized status is refused without being read', async () => {
    const root = tree('big', '');
    truncateSync(join(root, 'var/lib/dpkg/status'), MAX_STATUS_BYTES + 1);
    expect(await refusal(root)).toMatch(/larger than/);
  });

  it('a malformed stanza is a clear error', async () => {
    expect(await refusal(tree('junk', `${STANZA}\nthis is not a field\n`))).toMatch(/malformed: line 7: not a "Field: value" line/);
    expect(await refusal(tree('noversion', 'Package: x1\nStatus: install ok installed\nArchitecture: amd64\n'))).toMatch(/bad or missing Version/);
    expect(await refusal(tree('twice', `${STANZA}\n${STANZA}`))).toMatch(/hello:amd64 is listed twice/);
  });

  it('a copyright file that is a link is not read; a linked doc folder inside the tree is', async () => {
    const root = tree('copyright', `${STANZA}\nPackage: hello-doc\nStatus: install ok installed\nArchitecture: all\nVersion: 1\n\nPackage: gone\nStatus: deinstall ok config-files\nArchitecture: amd64\nVersion: 1\n`);
    const dep5 = 'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n\nFiles: *\nLicense: GPL-2+\n';
    writeFileSync(join(tmp.path, 'outside-copyright'), dep5);
    mkdirSync(join(root, 'usr/share/doc/hello'), { recursive: true });
    symlinkSync(join(tmp.path, 'outside-copyright'), join(root, 'usr/share/doc/hello/copyright'));
    // An absolute link restarts at the tree's root: /usr/share/doc/hello-doc → the tree's own folder.
    mkdirSync(join(root, 'usr/share/doc/real'), { recursive: true });
    writeFileSync(join(root, 'usr/share/doc/real/copyright'), dep5);
    symlinkSync('/usr/share/doc/real', join(root, 'usr/share/doc/hello-doc'));
    const c = await readImageContents(root, []);
    expect(c.packages.map((p) => [p.name, p.license, p.source, p.sourceVersion])).toEqual([
      ['hello', 'NOASSERTION', 'hello-src', '2.10-1'],
      ['hello-doc', 'GPL-2.0-or-later', 'hello-doc', '1'],
    ]);
    expect(c.distro).toEqual({ id: 'debian', versionId: '13' });
    expect(imageSboms(c, SUBJECT).spdx).toContain('distro=debian-13');
  });
});

describe('licences and statuses', () => {
  const dep5 = (...lic: string[]): string => `Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n\n${lic.map((l) => `Files: *\nLicense: ${l}\n`).join('\n')}`;
  it('maps clear DEP-5 short names and leaves the rest unasserted', () => {
    expect(licenseOf(dep5('GPL-2+', 'Expat'))).toBe('GPL-2.0-or-later AND MIT');
    expect(licenseOf(dep5('GPL-2+ or Artistic'))).toBe('Artistic-1.0-Perl OR GPL-2.0-or-later');
    expect(licenseOf(dep5('GPL-2+ or Artistic', 'BSD-3-clause'))).toBe('(Artistic-1.0-Perl OR GPL-2.0-or-later) AND BSD-3-Clause');
    expect(licenseOf(dep5('GPL-2+ with OpenSSL exception'))).toBe('NOASSERTION');
    expect(licenseOf(dep5('public-domain'))).toBe('NOASSERTION');
    expect(licenseOf(dep5('GPL-2 and MIT or BSD-3-clause'))).toBe('NOASSERTION');
    expect(licenseOf('This package was debianized by someone.\nIt is GPL.\n')).toBe('NOASSERTION');
  });

  it('parses continuation lines and skips removed packages', () => {
    const text = `${STANZA}Description: a greeter\n it says hello\n .\n to all\n\nPackage: old\nStatus: deinstall ok not-installed\nArchitecture: amd64\n`;
    expect(parseDpkgStatus(text)).toEqual([{ name: 'hello', version: '2.10-1+b1', arch: 'amd64', source: 'hello-src', sourceVersion: '2.10-1' }]);
  });
});
