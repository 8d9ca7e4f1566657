// The OpenStack account's fields as inputs, shared by Publication's `account` and CloudAccount.
import type { OpenStackAccountInput } from '../../src/engine/publication-body';
import { HTTP_URL_PATTERN } from '../../src/model/field-rules';
import type { Inputs } from './inputs';

export function checkAccountFields(a: Inputs): OpenStackAccountInput {
  return {
    name: a.string('name'),
    keystoneUrl: a.string('keystoneUrl', { required: true, pattern: HTTP_URL_PATTERN, hint: 'must be an http(s) URL, e.g. http://keystone:5000/v3' }) ?? '',
    glanceUrl: a.string('glanceUrl', { pattern: HTTP_URL_PATTERN, hint: 'must be an http(s) URL, e.g. http://glance:9292' }),
    login: a.string('login', { required: true }) ?? '',
    password: a.string('password', { required: true }) ?? '',
    keystoneVersion: a.string('keystoneVersion', { default: 'v3', pattern: /^v3$/, hint: 'must be v3 (identity v3 is the one supported)' }),
  };
}
