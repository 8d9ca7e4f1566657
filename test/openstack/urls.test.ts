// Wire contract §9: keystoneUrl and glanceUrl with or without their version segment. Pure, no services.
import { describe, expect, it } from 'vitest';
import { glanceBase, keystoneBase, OpenStackError } from '../../src/openstack';

describe('OpenStack base URLs', () => {
  it.each([
    ['http://127.0.0.1:5000', 'http://127.0.0.1:5000/v3'],
    ['http://127.0.0.1:5000/', 'http://127.0.0.1:5000/v3'],
    ['http://127.0.0.1:5000/v3', 'http://127.0.0.1:5000/v3'],
    ['http://127.0.0.1:5000/v3/', 'http://127.0.0.1:5000/v3'],
    ['https://cloud.example/identity/v3', 'https://cloud.example/identity/v3'],
    ['https://cloud.example/identity', 'https://cloud.example/identity/v3'],
    ['http://127.0.0.1:5000/v2.0', 'http://127.0.0.1:5000/v3'],
    ['  HTTP://127.0.0.1:5000/V3 ', 'http://127.0.0.1:5000/v3'],
  ])('keystone %s → %s', (given, want) => expect(keystoneBase(given)).toBe(want));

  it.each([
    ['http://127.0.0.1:9292', 'http://127.0.0.1:9292/v2'],
    ['http://127.0.0.1:9292/v2', 'http://127.0.0.1:9292/v2'],
    ['http://127.0.0.1:9292/v2/', 'http://127.0.0.1:9292/v2'],
    ['http://127.0.0.1:9292/v2.1', 'http://127.0.0.1:9292/v2'],
    ['https://cloud.example/image', 'https://cloud.example/image/v2'],
  ])('glance %s → %s', (given, want) => expect(glanceBase(given)).toBe(want));

  it.each([
    ['not a url', /not a valid URL/],
    ['ftp://h/v3', /http or https/],
    ['http://user:s3cret-pw@h:5000/v3', /must not contain user info/],
    ['http://h:5000/v3?x=1', /query or fragment/],
  ])('refuses %s with kind input and no secret', (given, message) => {
    let err: unknown;
    try {
      keystoneBase(given);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(OpenStackError);
    expect(err).toMatchObject({ kind: 'input', code: 'E_OPENSTACK' });
    expect((err as Error).message).toMatch(message);
    expect((err as Error).message).not.toContain('s3cret-pw');
  });
});
