// Keystone v3 password authentication scoped to a project (docs/contracts.md, OpenStack;
// openstack/README.md: 201 with the token in X-Subject-Token, the catalog in the body).
import { isRecord, type Connection } from './http';
import { glanceBase, keystoneBase } from './urls';

/** Where and as whom to publish: the fields of a CredAccountOpenStack plus the publication's domain and project. */
export interface OpenStackAccess {
  /** With or without `/v3` (wire contract §9). */
  readonly keystoneUrl: string;
  /** With or without `/v2`; when absent, the public `image` endpoint of the catalog is used. */
  readonly glanceUrl?: string | undefined;
  readonly login: string;
  readonly password: string;
  /** Domain name of both the user and the project. */
  readonly domain: string;
  readonly project: string;
}

export interface Session {
  readonly token: string;
  /** Glance base URL ending in `/v2`. */
  readonly glance: string;
}

/** Authenticates and returns a project-scoped token and the Glance endpoint to use. */
export async function authenticate(conn: Connection, access: OpenStackAccess): Promise<Session> {
  const base = keystoneBase(access.keystoneUrl);
  const glanceGiven = access.glanceUrl ? glanceBase(access.glanceUrl) : undefined;
  conn.secret(access.password);
  const what = `authenticate ${access.login} in domain ${access.domain} for project ${access.project}`;
  const call = { service: 'keystone' as const, what, method: 'POST' as const, url: `${base}/auth/tokens` };
  const scoped = await conn.call({ ...call, json: authBody(access, true) });
  const token = headerValue(scoped.headers['x-subject-token']);
  if (token) conn.secret(token);

  if (scoped.status === 401) {
    // Keystone answers the same 401 for a wrong password and for a project it will not scope to;
    // an unscoped attempt with the same credentials tells the two apart.
    const unscoped = await conn.call({ ...call, json: authBody(access, false) });
    const probe = headerValue(unscoped.headers['x-subject-token']);
    if (probe) conn.secret(probe);
    if (unscoped.status === 201) {
      throw conn.error('project', `${what}: the credentials are valid but project ${access.project} in domain ` +
        `${access.domain} does not exist or the user has no role on it`, { service: 'keystone', status: 401 });
    }
    if (unscoped.status === 401) {
      throw conn.error('auth', `${what}: Keystone refused the credentials (wrong login, password or domain)`,
        { service: 'keystone', status: 401 });
    }
    throw conn.error('keystone', conn.describe(call, unscoped), { service: 'keystone', status: unscoped.status });
  }
  if (scoped.status === 403) throw conn.error('forbidden', conn.describe(call, scoped), { service: 'keystone', status: 403 });
  if (scoped.status === 404) throw conn.error('project', conn.describe(call, scoped), { service: 'keystone', status: 404 });
  if (scoped.status !== 201 && scoped.status !== 200) {
    throw conn.error('keystone', conn.describe(call, scoped), { service: 'keystone', status: scoped.status });
  }
  if (!token) throw conn.error('keystone', `${what}: Keystone answered ${scoped.status} without X-Subject-Token`, { service: 'keystone' });
  const glance = glanceGiven ?? imageEndpoint(scoped.json);
  if (!glance) {
    throw conn.error('keystone', `${what}: the service catalog has no public image endpoint; give glanceUrl`, { service: 'keystone' });
  }
  return { token, glance };
}

function authBody(a: OpenStackAccess, scoped: boolean): unknown {
  const identity = {
    methods: ['password'],
    password: { user: { name: a.login, domain: { name: a.domain }, password: a.password } },
  };
  return { auth: scoped ? { identity, scope: { project: { name: a.project, domain: { name: a.domain } } } } : { identity } };
}

/** The public endpoint of the first catalog service of type `image`, normalised to `/v2`. */
function imageEndpoint(body: unknown): string | undefined {
  const catalog = isRecord(body) && isRecord(body.token) ? body.token.catalog : undefined;
  if (!Array.isArray(catalog)) return undefined;
  for (const svc of catalog) {
    if (!isRecord(svc) || svc.type !== 'image' || !Array.isArray(svc.endpoints)) continue;
    for (const ep of svc.endpoints) {
      if (isRecord(ep) && ep.interface === 'public' && typeof ep.url === 'string') {
        try {
          return glanceBase(ep.url);
        } catch {
          continue; // a malformed entry: try the next one
        }
      }
    }
  }
  return undefined;
}

function headerValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}
