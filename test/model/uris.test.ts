// The URI module: URIs written by hand from the spec's examples ("Resource URIs", wire contract §1),
// not produced by the code under test.
import { describe, expect, it } from 'vitest';
import { operations } from '../../src/model/operations';
import { parseUri, uriOf, uriParams, uriPattern } from '../../src/model/uris';

describe('uriOf', () => {
  it('writes the spec shapes, relative and without a leading slash', () => {
    expect(uriOf('appliance_get', { uid: 'alice', aid: 12 })).toBe('users/alice/appliances/12');
    expect(uriOf('osPkg_get', { id: 3, pid: 881 })).toBe('distributions/3/pkgs/881');
    expect(uriOf('osTemplate_get', { id: 1, prid: 2 })).toBe('distributions/1/profiles/2');
    expect(uriOf('mySoftware_get', { uid: 'alice', msid: 4 })).toBe('users/alice/mysoftware/4');
    expect(uriOf('org_get', { oid: 1 })).toBe('orgs/1');
    expect(uriOf('machineImagePublishedStatus_get', { uid: 'bob', aid: 1, itid: 2, pitid: 3 })).toBe('users/bob/appliances/1/images/2/pimages/3/status');
    expect(uriOf('appliancePublication', { uid: 'bob', aid: 1, pitid: 3 })).toBe('users/bob/appliances/1/pimages/3');
  });

  it('keeps each value inside its segment', () => {
    expect(uriOf('user_get', { uid: 'a b' })).toBe('users/a%20b');
    expect(uriOf('machineImage_downloadFile', { uid: 'a', aid: 1, itid: 2, fileName: '../x?y#z' })).toBe('users/a/appliances/1/images/2/downloads/..%2Fx%3Fy%23z');
    expect(() => uriOf('user_get', { uid: '' })).toThrow(TypeError);
  });
});

describe('parseUri', () => {
  it('reads the parameters back, decoded', () => {
    expect(parseUri('users/alice/appliances/12/images/3', ['machineImage_get'])).toEqual({
      shape: 'machineImage_get',
      params: { uid: 'alice', aid: '12', itid: '3' },
    });
    expect(parseUri('users/a%20b/mysoftware/4', ['mySoftware_get'])?.params).toEqual({ uid: 'a b', msid: '4' });
  });

  it('tolerates leading slashes, one trailing slash and the spec table\'s `distribution/`', () => {
    expect(parseUri('//users/alice/appliances/12/', ['appliance_get'])?.params).toEqual({ uid: 'alice', aid: '12' });
    expect(parseUri('distribution/1/profiles/2', ['osTemplate_get'])?.params).toEqual({ id: '1', prid: '2' });
    expect(parseUri('/distributions/1/pkgs/9', ['osPkg_get'])?.params).toEqual({ id: '1', pid: '9' });
  });

  it('returns the first of the given shapes the URI has', () => {
    const shapes = ['machineImagePublished_get', 'appliancePublication', 'machineImage_get'] as const;
    expect(parseUri('users/u/appliances/1/images/2/pimages/3', shapes)?.shape).toBe('machineImagePublished_get');
    expect(parseUri('users/u/appliances/1/pimages/3', shapes)?.shape).toBe('appliancePublication');
    expect(parseUri('users/u/appliances/1/images/2', shapes)?.shape).toBe('machineImage_get');
  });

  it.each([
    ['users/alice/appliances/12', 'machineImage_get'],
    ['users/alice/appliances/12/images/3/extra', 'machineImage_get'],
    ['users/alice/appliances/12/images/3?x=1', 'machineImage_get'],
    ['users//appliances/12', 'appliance_get'],
    ['users/%E0%A4%A/appliances/12', 'appliance_get'],
    ['orgs/1', 'os_get'],
    ['https://host/users/alice', 'user_get'],
  ] as const)('%s is not a %s URI', (uri, shape) => {
    expect(parseUri(uri, [shape])).toBeUndefined();
    expect(() => uriParams(shape, uri)).toThrow(TypeError);
  });

  it('reads back what it writes, for every operation path', () => {
    for (const op of operations) {
      const values = Object.fromEntries([...op.path.matchAll(/\{(\w+)\}/g)].map((m, i) => [m[1]!, `v ${i}/é`]));
      expect(parseUri(uriOf(op.id, values as never), [op.id])?.params, op.id).toEqual(values);
    }
  });
});

describe('uriPattern', () => {
  it('accepts only the canonical form', () => {
    const p = uriPattern('appliance_get');
    expect(p.test('users/alice/appliances/12')).toBe(true);
    expect(p.test('/users/alice/appliances/12')).toBe(false);
    expect(p.test('users/alice/appliances/12/')).toBe(false);
    expect(p.test('users/alice/appliances')).toBe(false);
    expect(uriPattern('org_get').test('orgs/1')).toBe(true);
  });
});
