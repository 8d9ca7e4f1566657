// Hand-written wire documents (test/fixtures/wire/*.xml, written from uforge.xsd, not by the codec) pin the
// element names and their order independently of the model: each must validate against the schema
// (xmllint), decode to the values written here, and encode back to the same elements in the same order.
// A field renamed or moved in the model fails here even where the round-trip tests still pass.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodeXml, encodeXml } from '../../src/codec/index';
import type { DocumentRoot } from '../../src/model/resources';
import { XSD } from '../support/shared';

const FIXTURES = join(__dirname, '../fixtures/wire');

/** Element local names in document order, read with a regex (not the codec's parser). */
function elementNames(xml: string): string[] {
  const body = xml.replace(/<\?[^>]*\?>/g, '').replace(/<!--[\s\S]*?-->/g, '');
  return [...body.matchAll(/<([A-Za-z_][\w.-]*:)?([A-Za-z_][\w.-]*)[\s/>]/g)].map((m) => m[2] ?? '');
}

const cases: Array<{ file: string; root: DocumentRoot; kind?: string; value: Record<string, unknown> }> = [
  {
    file: 'appliance.xml',
    root: 'appliance',
    value: {
      created: '2026-11-20T09:15:00.000Z',
      dbId: 42,
      lastModified: '2026-11-21T10:00:00.000Z',
      uuid: '6f1c2b9e-7a51-4e8c-9d0b-3a2f1e5c7d90',
      archName: 'x86_64',
      baseImagesUri: 'users/alice/appliances/42/images',
      description: 'nginx & a site',
      distributionName: 'Debian',
      distributionUri: 'distributions/3',
      imageUris: ['users/alice/appliances/42/images/1', 'users/alice/appliances/42/images/2'],
      installProfile: {
        diskSize: 4096,
        memorySize: 1024,
        rootUser: { name: 'root', sshKeys: [{ name: 'ops', publicKey: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHandWrittenKey ops@example' }] },
        swapSize: 512,
        timezone: 'Europe/Paris',
      },
      mySoftwareList: [{ name: 'site', version: '1.0', uri: 'users/alice/mysoftware/5' }],
      name: 'web',
      orgUri: 'orgs/1',
      osProfileUri: 'users/alice/appliances/42/osprofile/7',
      revision: 3,
      size: 0,
      uri: 'users/alice/appliances/42',
      version: '1.0',
    },
  },
  {
    file: 'cred-account-openstack.xml',
    root: 'credAccount',
    kind: 'CredAccountOpenStack',
    value: {
      kind: 'CredAccountOpenStack',
      dbId: 9,
      name: 'lab',
      uri: 'users/alice/accounts/9',
      targetPlatform: { name: 'OpenStack', type: 'openstack' },
      secretsMissing: true,
      glanceUrl: 'http://127.0.0.1:9292',
      keystoneUrl: 'http://127.0.0.1:5000/v3',
      login: 'demo',
      keystoneVersion: 'v3',
    },
  },
  {
    file: 'appliances.xml',
    root: 'appliances',
    value: {
      total: 2,
      appliances: [
        { dbId: 1, name: 'web', uri: 'users/alice/appliances/1', version: '1.0' },
        { dbId: 2, name: 'db', revision: 0, uri: 'users/alice/appliances/2', version: '2' },
      ],
    },
  },
];

describe('hand-written wire fixtures', () => {
  it('the schema is there (a missing schema fails, it does not skip)', () => {
    expect(existsSync(XSD), `${XSD} is missing: the fixtures cannot be checked`).toBe(true);
  });

  it.each(cases)('$file validates against uforge.xsd (xmllint)', ({ file }) => {
    const out = execFileSync('xmllint', ['--noout', '--schema', XSD, join(FIXTURES, file)], { stdio: 'pipe' });
    expect(out.toString()).toBe('');
  });

  it.each(cases)('$file decodes to the values written by hand', ({ file, root, kind, value }) => {
    const doc = decodeXml(readFileSync(join(FIXTURES, file), 'utf8'), root);
    expect(doc.root).toBe(root);
    expect(doc.kind).toBe(kind);
    expect(doc.value).toEqual(value);
  });

  it.each(cases)('$file: the codec writes the same elements in the same order', ({ file, root }) => {
    const text = readFileSync(join(FIXTURES, file), 'utf8');
    const written = encodeXml(root, decodeXml(text, root).value);
    expect(elementNames(written)).toEqual(elementNames(text));
  });
});
