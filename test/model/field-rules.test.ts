// Field rules held once in the model: hand-written vectors, and one masker with one minimum.
import { describe, expect, it } from 'vitest';
import { isHttpUrl, RIGHTS_PATTERN } from '../../src/model/field-rules';
import { maskSecrets, MIN_SECRET_LENGTH } from '../../src/model/redact';
import { SecretSet } from '../../src/engine/secrets';

describe('field rules', () => {
  it.each(['644', '0644', '4755', '0000'])('rights %s is octal', (v) => expect(RIGHTS_PATTERN.test(v)).toBe(true));
  it.each(['64', '0800', '12345', 'rw-r--r--', ' 644', ''])('rights %j is refused', (v) => expect(RIGHTS_PATTERN.test(v)).toBe(false));

  it.each(['http://127.0.0.1:5000/v3', 'https://keystone.example/v3?x=1', 'HTTPS://HOST', 'http://[::1]:9292'])('%s is an http(s) URL', (v) =>
    expect(isHttpUrl(v)).toBe(true));
  it.each(['ftp://host/', 'http://', 'http:///path', 'http://host /v3', 'keystone:5000', 'javascript:alert(1)', ''])('%j is not', (v) =>
    expect(isHttpUrl(v)).toBe(false));
});

describe('one masker, one minimum', () => {
  it('masks every secret of the minimum length or more, longest first, and leaves shorter ones', () => {
    expect(MIN_SECRET_LENGTH).toBe(3);
    expect(maskSecrets('ab abc abcd', ['ab', 'abc', 'abcd'])).toBe('ab *** ***');
    const set = new SecretSet();
    set.addAll(['ab', 'abc']);
    expect(set.list()).toEqual(['abc']);
    expect(set.mask('ab abc')).toBe('ab ***');
  });
});
