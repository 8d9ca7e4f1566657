// Base URLs of Keystone and Glance as given by users or the catalog, normalised to their version root.
// Wire contract §9: `keystoneUrl` with or without `/v3`, `glanceUrl` with or without `/v2`.
import { OpenStackError } from './errors';

const VERSION_SEGMENT = /\/v\d+(\.\d+)?$/i;

/** `http://h:5000`, `http://h:5000/v3`, `http://h/identity/v3/` → `…/v3` (a `/v2.0` is replaced too: v3 only). */
export function keystoneBase(raw: string): string {
  return versioned(raw, 'keystoneUrl', '/v3');
}

/** `http://h:9292`, `http://h:9292/v2`, `http://h/image/v2.1/` → `…/v2`. */
export function glanceBase(raw: string): string {
  return versioned(raw, 'glanceUrl', '/v2');
}

/** A URL for messages: origin and path only (never user info or a query). */
export function shown(url: string): string {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}`;
  } catch {
    return '<invalid URL>';
  }
}

function versioned(raw: string, field: string, version: string): string {
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    throw new OpenStackError('input', `${field} is not a valid URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new OpenStackError('input', `${field} must be an http or https URL, not ${u.protocol}`);
  }
  // Credentials in a URL would end up in logs and messages; the account has its own fields.
  if (u.username || u.password) throw new OpenStackError('input', `${field} must not contain user info`);
  if (u.search || u.hash) throw new OpenStackError('input', `${field} must not have a query or fragment`);
  const path = u.pathname.replace(/\/+$/, '').replace(VERSION_SEGMENT, '');
  return `${u.origin}${path}${version}`;
}
