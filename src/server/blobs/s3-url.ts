// The S3 blob store's configuration string (`serve --blob-store`, APPLIANCE_FORGE_BLOB_STORE):
// `s3://BUCKET[/PREFIX][?endpoint=URL&region=R&path-style=true]`. It names where the blobs are and
// never how to sign: credentials come from the AWS SDK's default chain (environment, shared files,
// instance roles), so a URL that carries any is refused rather than printed back. Without `endpoint`
// or `region` the SDK's own settings apply (AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, AWS_REGION, the
// profile's `endpoint_url` and `region`): the SDK reads them itself, this module does not copy it.
import { ForgeError } from '../../errors';

/**
 * The blob store cannot be used as configured or asked: `config` (a configuration string that does
 * not parse, a missing SDK or region), `key` (a key that is not `files/<name>` or `images/<name>`, as
 * read from a damaged or foreign database), `s3` (the service refused or failed; `status` and
 * `s3Code` say how). Messages never hold a secret.
 */
export class BlobStoreError extends ForgeError {
  static readonly code = 'E_BLOB_STORE';
  constructor(
    readonly kind: 'config' | 'key' | 's3',
    message: string,
    /** For `s3`: the HTTP status of the service's answer, when there was one. */
    readonly status?: number,
    /** For `s3`: the service's error code (`SignatureDoesNotMatch`, `NoSuchBucket`…) or the client's error name. */
    readonly s3Code?: string,
  ) {
    super(message);
    this.name = 'BlobStoreError';
  }
}

export interface S3Location {
  readonly bucket: string;
  /** Folders under which the keys live, without a leading or trailing `/`; `''` for the bucket's root. */
  readonly prefix: string;
  /** `http(s)://host[:port][/path]`; absent: the SDK's configured endpoint, else AWS's. */
  readonly endpoint?: string;
  /** Absent: the SDK's configured region. */
  readonly region?: string;
  /** `https://endpoint/bucket/key` rather than `https://bucket.endpoint/key`: most S3-compatible services need it. */
  readonly forcePathStyle: boolean;
}

const FORM = 's3://BUCKET[/PREFIX][?endpoint=URL&region=REGION&path-style=true]';
// S3's rules for new buckets (docs.aws.amazon.com/AmazonS3/latest/userguide/bucketnamingrules.html).
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const SEGMENT = /^[A-Za-z0-9._-]+$/;
const REGION = /^[a-z0-9-]{1,64}$/;
const PARAMS = ['endpoint', 'region', 'path-style'] as const;

const bad = (why: string): BlobStoreError => new BlobStoreError('config', `blob store: ${why} (expected ${FORM})`);

/** The configuration string as a location; a mistake is a BlobStoreError (`config`) that quotes no credential. */
export function parseS3Url(text: string): S3Location {
  const m = /^s3:\/\/([^/?#]*)([^?#]*)(?:\?([^#]*))?$/i.exec(text.trim());
  if (!m) return fail(text.includes('#') ? 'a fragment (#) is not allowed' : 'not an s3:// URL');
  const [, authority = '', path = '', query] = m;
  if (authority.includes('@')) return fail('credentials do not belong in the URL: the AWS SDK reads them from its environment, files or role');
  if (!BUCKET.test(authority) || authority.includes('..') || /^\d+\.\d+\.\d+\.\d+$/.test(authority)) {
    return fail(`${JSON.stringify(authority)} is not a bucket name (3 to 63 lowercase letters, digits, dots and hyphens)`);
  }
  const segments = path.split('/').filter((s, i, all) => !(s === '' && (i === 0 || i === all.length - 1)));
  for (const s of segments) {
    if (!SEGMENT.test(s) || s === '.' || s === '..') {
      return fail(`the prefix ${JSON.stringify(path)} must be folder names of letters, digits, '.', '_' and '-', without empty, '.' or '..' parts`);
    }
  }
  let loc: { bucket: string; prefix: string; endpoint?: string; region?: string; forcePathStyle: boolean } = {
    bucket: authority, prefix: segments.join('/'), forcePathStyle: false,
  };
  const seen = new Set<string>();
  for (const [name, value] of new URLSearchParams(query ?? '')) {
    if (!PARAMS.some((p) => p === name)) return fail(`unknown parameter ${JSON.stringify(name)}: the parameters are ${PARAMS.join(', ')}`);
    if (seen.has(name)) return fail(`the parameter ${name} is given twice`);
    seen.add(name);
    if (name === 'endpoint') loc = { ...loc, endpoint: endpointOf(value) };
    else if (name === 'region') {
      if (!REGION.test(value)) return fail(`${JSON.stringify(value)} is not a region name`);
      loc = { ...loc, region: value };
    } else {
      if (!['true', 'false', '1', '0'].includes(value)) return fail(`path-style must be true or false, not ${JSON.stringify(value)}`);
      loc = { ...loc, forcePathStyle: value === 'true' || value === '1' };
    }
  }
  return loc;
}

function fail(why: string): never {
  throw bad(why);
}

/** An http(s) origin with an optional path; a user, password, query or fragment is refused (and never quoted). */
function endpointOf(value: string): string {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    return fail('the endpoint is not a URL');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return fail(`the endpoint must be http: or https:, not ${u.protocol}`);
  if (u.username !== '' || u.password !== '') return fail('credentials do not belong in the endpoint: the AWS SDK reads them from its environment, files or role');
  if (u.search !== '' || u.hash !== '') return fail('the endpoint takes no query or fragment');
  return u.pathname === '/' ? u.origin : `${u.origin}${u.pathname.replace(/\/+$/, '')}`;
}

/** The location as a configuration string that parses back to it (the start line shows it). */
export function renderS3Url(loc: S3Location): string {
  const q = new URLSearchParams();
  if (loc.endpoint !== undefined) q.set('endpoint', loc.endpoint);
  if (loc.region !== undefined) q.set('region', loc.region);
  if (loc.forcePathStyle) q.set('path-style', 'true');
  const query = q.toString();
  return `s3://${loc.bucket}${loc.prefix ? `/${loc.prefix}` : ''}${query ? `?${query}` : ''}`;
}

/** `s3://bucket/prefix at <endpoint>`: where the blobs are, for the start line and errors; `endpoint` as the client resolved it. */
export function describeS3Location(loc: S3Location, endpoint: string | undefined, region?: string): string {
  const configured = loc.endpoint ?? endpoint;
  const at = configured !== undefined ? shownEndpoint(configured) : `AWS S3${region ? ` (${region})` : ''}`;
  return `s3://${loc.bucket}${loc.prefix ? `/${loc.prefix}` : ''} at ${at}`;
}

/** An endpoint from the SDK's settings as it may be shown: no user, password or query (a signed one) survives. */
function shownEndpoint(endpoint: string): string {
  try {
    const u = new URL(endpoint);
    return u.pathname === '/' ? u.origin : `${u.origin}${u.pathname}`;
  } catch {
    return 'the configured endpoint';
  }
}
