// Planning is a pure function: these tests drive it with hand-written service state.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Declaration } from '../../src/engine/declaration';
import { parseDeclarationFile } from '../../src/engine/parse';
import { computePlan, softwareTag } from '../../src/engine/plan';
import type { LocalFile, Observed, Resolved } from '../../src/engine/state';
import type { Image, PublishImage } from '../../src/model/resources';

const env = {
  OS_AUTH_URL: 'http://127.0.0.1:5000/v3', OPENSTACK_GLANCE_URL: 'http://127.0.0.1:9292',
  OS_USERNAME: 'admin', OS_PASSWORD: 'pw', OS_USER_DOMAIN_NAME: 'Default', OS_PROJECT_NAME: 'admin',
};
const decl = parseDeclarationFile(path.resolve(__dirname, '../../examples/appliance.yml'), { env }).declaration as Declaration;
const files = new Map<string, LocalFile>(decl.stack.bundles[0]!.files.map((f, i) => [f.path, { sha256: `h${i}`, size: 10 }]));
const A = 'users/u/appliances/1';

const resolved: Resolved = {
  distribution: { uri: 'distributions/1', id: '1', label: 'Debian 12 x86_64' },
  profile: { uri: 'distributions/1/profiles/1', name: 'Minimal', pkgUris: new Set(['distributions/1/pkgs/1', 'distributions/1/pkgs/2']) },
  packages: [
    { decl: decl.stack.packages[0]!, uri: 'distributions/1/pkgs/10', label: 'curl' },
    { decl: decl.stack.packages[1]!, uri: 'distributions/1/pkgs/11', label: 'nginx' },
  ],
  formats: new Map([[0, { name: 'QCOW2' }], [1, { name: 'OpenStack QCOW2', credAccountType: 'openstack' }]]),
  accounts: new Map([[1, { name: 'lab', keystoneUrl: 'http://127.0.0.1:5000/v3', login: 'admin', password: 'pw' }]]),
};

const done = { complete: true, error: false, cancelled: false, percentage: 100 };
function converged(): Observed {
  const image = (id: number, format: string): Image => ({
    uri: `${A}/images/${id}`, dbId: id, revision: 7, compress: false, targetFormat: { name: format },
    installProfile: { memorySize: 1024, diskSize: 2048 }, status: done,
  });
  const pub: PublishImage = {
    uri: `${A}/images/2/pimages/1`, imageUri: `${A}/images/2`, displayName: 'example-web-1.0', keystoneDomain: 'Default',
    keystoneProject: 'admin', publicImage: false, cloudId: 'glance-id', status: { ...done, published: true },
    credAccount: { kind: 'CredAccountOpenStack', keystoneUrl: 'http://127.0.0.1:5000', login: 'admin' },
  };
  return {
    appliance: {
      uri: A, name: 'example-web', version: '1.0', description: 'nginx serving a static page', distributionUri: 'distributions/1',
      revision: 7, osProfileUri: `${A}/osprofile/1`, installProfile: { diskSize: 2048, timezone: 'Etc/UTC' },
      tag: softwareTag(decl.stack.bundles, files),
      mySoftwareList: [{ name: 'example-site', version: '1.0', uri: 'users/u/mysoftware/1' }],
    },
    osProfile: { uri: `${A}/osprofile/1`, standardProfileUri: 'distributions/1/profiles/1' },
    profilePkgUris: ['distributions/1/pkgs/1', 'distributions/1/pkgs/2', 'distributions/1/pkgs/10', 'distributions/1/pkgs/11'],
    software: new Map([['example-site', {
      record: { uri: 'users/u/mysoftware/1', description: 'the web site and its nginx configuration' },
      artifacts: decl.stack.bundles[0]!.files.map((f, i) => ({
        uri: `users/u/mysoftware/1/artifacts/${i}`, name: f.name, sha256sum: `h${i}`, installLocation: f.destination, rights: f.rights, ownerGroup: f.ownerGroup,
      })),
    }]]),
    images: [image(1, 'QCOW2'), image(2, 'OpenStack QCOW2')],
    publications: [pub],
  };
}

describe('computePlan', () => {
  it('creates everything when the service holds nothing', () => {
    const plan = computePlan(decl, resolved, { profilePkgUris: [], software: new Map(), images: [], publications: [] }, files);
    expect(plan.appliance.action).toBe('create');
    expect(plan.osProfile.action).toBe('create');
    expect(plan.packages.add.map((p) => p.label)).toEqual(['curl', 'nginx']);
    expect(plan.software[0]!.files.map((f) => f.action)).toEqual(['create', 'create']);
    expect(plan.images.map((i) => i.action)).toEqual(['generate', 'generate']);
    expect(plan.publications.map((p) => p.action)).toEqual(['publish']);
    expect(plan.hasChanges).toBe(true);
  });

  it('changes nothing when the service matches the file', () => {
    const plan = computePlan(decl, resolved, converged(), files);
    expect(plan.hasChanges).toBe(false);
    expect(plan.images.map((i) => [i.action, i.action === 'reuse' ? i.uri : undefined])).toEqual([['reuse', `${A}/images/1`], ['reuse', `${A}/images/2`]]);
    expect(plan.publications.map((p) => [p.action, p.action === 'reuse' ? p.publication.cloudId : undefined])).toEqual([['reuse', 'glance-id']]);
  });

  it('a changed package list updates the packages and regenerates the images, not the software', () => {
    const r = { ...resolved, packages: resolved.packages.slice(0, 1) };
    const plan = computePlan(decl, r, converged(), files);
    expect(plan.packages.remove.map((p) => p.uri)).toEqual(['distributions/1/pkgs/11']);
    expect(plan.packages.add).toEqual([]);
    expect(plan.software[0]!.action).toBe('unchanged');
    expect(plan.images.map((i) => i.action)).toEqual(['generate', 'generate']);
    expect(plan.publications.map((p) => p.action)).toEqual(['publish']);
  });

  it('a changed builder regenerates only its own image', () => {
    const b1 = { ...decl.builders[1]!, installProfile: { memorySize: 2048 } };
    const plan = computePlan({ ...decl, builders: [decl.builders[0]!, b1] }, resolved, converged(), files);
    expect(plan.images.map((i) => i.action)).toEqual(['reuse', 'generate']);
    expect(plan.publications.map((p) => p.action)).toEqual(['publish']);
  });

  it('a changed file is uploaded again and makes a new revision through the software tag', () => {
    const changed = new Map(files);
    changed.set(decl.stack.bundles[0]!.files[1]!.path, { sha256: 'new', size: 11 });
    const plan = computePlan(decl, resolved, converged(), changed);
    expect(plan.software[0]!.files.map((f) => f.action)).toEqual(['unchanged', 'update']);
    expect(plan.appliance.changes).toEqual(['software content']);
    expect(plan.images.every((i) => i.action === 'generate')).toBe(true);
  });

  it('ignores failed images and waits for running ones', () => {
    const o = converged();
    const images = [
      { ...o.images[0]!, status: { error: true, complete: false } },
      { ...o.images[1]!, status: { complete: false, error: false, percentage: 40 } },
    ];
    const plan = computePlan(decl, resolved, { ...o, images }, files);
    expect(plan.images.map((i) => [i.action, i.action === 'reuse' && i.pending])).toEqual([['generate', false], ['reuse', true]]);
  });

  it('refuses an existing appliance of another distribution, at the os line', () => {
    const o = converged();
    expect(() => computePlan(decl, resolved, { ...o, appliance: { ...o.appliance!, distributionUri: 'distributions/9' } }, files))
      .toThrow(/appliance.yml:9:5: error: appliance "example-web" version 1.0 already exists for another distribution/);
  });
});
