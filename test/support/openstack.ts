// Test helpers: start (or reuse) the real loopback Keystone + Glance of ../shared/openstack, read
// its env file, and talk to Glance directly to check what the module under test left behind.
// The one place every suite gets its OpenStack from.
import { execFileSync } from 'node:child_process';
import { randomFillSync } from 'node:crypto';
import { closeSync, existsSync, openSync, readFileSync, writeSync } from 'node:fs';
import { request } from 'undici';
import { START_OPENSTACK as START } from './shared';
import { messageOf } from '../../src/errors';

export interface OpenStackEnv {
  keystoneUrl: string;
  glanceUrl: string;
  domain: string;
  admin: { login: string; password: string; project: string };
  user: { login: string; password: string; project: string };
}


/** The running services, or a reason why these tests must skip on this machine. */
export function openStackServices(): { env?: OpenStackEnv; vars?: Record<string, string>; skip?: string } {
  if (!existsSync('/etc/debian_version')) return { skip: 'not a Debian machine' };
  if (process.getuid?.() !== 0) return { skip: 'not root (start-openstack.sh installs and starts system services)' };
  if (!existsSync(START)) return { skip: `${START} not found` };
  let out: string;
  try {
    out = execFileSync('bash', [START], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 170_000 });
  } catch (e) {
    return { skip: `start-openstack.sh failed: ${messageOf(e).split('\n')[0]}` };
  }
  const envFile = out.trim().split('\n').pop() ?? '';
  const v = parseEnvFile(readFileSync(envFile, 'utf8'));
  const need = (k: string) => {
    const x = v[k];
    if (!x) throw new Error(`${envFile} lacks ${k}`);
    return x;
  };
  return {
    vars: v,
    env: {
      keystoneUrl: need('OPENSTACK_KEYSTONE_URL'),
      glanceUrl: need('OPENSTACK_GLANCE_URL'),
      domain: need('OS_USER_DOMAIN_NAME'),
      admin: { login: need('OS_USERNAME'), password: need('OS_PASSWORD'), project: need('OS_PROJECT_NAME') },
      user: { login: need('OPENSTACK_TEST_USERNAME'), password: need('OPENSTACK_TEST_PASSWORD'), project: need('OPENSTACK_TEST_PROJECT') },
    },
  };
}

function parseEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^\s*(?:export\s+)?([A-Z0-9_]+)=(.*)$/.exec(line);
    if (m) out[m[1]!] = m[2]!.replace(/^(['"])(.*)\1$/, '$2');
  }
  return out;
}

/** An admin-scoped token, obtained independently of the module under test. */
export async function adminToken(env: OpenStackEnv): Promise<string> {
  const res = await request(`${env.keystoneUrl.replace(/\/v3\/?$/, '')}/v3/auth/tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ auth: {
      identity: { methods: ['password'], password: { user: { name: env.admin.login, domain: { name: env.domain }, password: env.admin.password } } },
      scope: { project: { name: env.admin.project, domain: { name: env.domain } } },
    } }),
  });
  await res.body.dump();
  const t = res.headers['x-subject-token'];
  if (res.statusCode !== 201 || typeof t !== 'string') throw new Error(`admin auth failed: ${res.statusCode}`);
  return t;
}

/** Every image with this name in any project (the admin sees all), as [id, status]. */
export async function imagesNamed(env: OpenStackEnv, name: string): Promise<Array<[string, string]>> {
  const token = await adminToken(env);
  const res = await request(`${env.glanceUrl}/v2/images?name=${encodeURIComponent(name)}&limit=100`, {
    headers: { 'x-auth-token': token, accept: 'application/json' },
  });
  const body = (await res.body.json()) as { images: Array<{ id: string; status: string }> };
  if (res.statusCode !== 200) throw new Error(`list failed: ${res.statusCode}`);
  return body.images.map((i) => [i.id, i.status]);
}

/** A file of random bytes written chunk by chunk (memory stays at one chunk). */
export function randomFile(path: string, bytes: number): void {
  const fd = openSync(path, 'w');
  const buf = Buffer.alloc(4 * 1024 * 1024);
  try {
    for (let left = bytes; left > 0; left -= buf.length) writeSync(fd, randomFillSync(buf), 0, Math.min(left, buf.length));
  } finally {
    closeSync(fd);
  }
}

/**
 * Remove every Glance image created since `sinceMs` by anyone, when the loopback OpenStack of
 * ../shared/openstack is running: a test run's publications (kept by tests that check what Glance
 * holds, or left by a killed server) would otherwise fill the machine's disk run after run.
 * Returns how many were removed; nothing when no such OpenStack runs.
 */
export async function sweepGlanceSince(sinceMs: number): Promise<number> {
  const envFile = `${process.env.OPENSTACK_STATE_DIR ?? '/var/tmp/openstack-it'}/openstack.env`;
  if (!existsSync(envFile)) return 0;
  const v = parseEnvFile(readFileSync(envFile, 'utf8'));
  const glanceUrl = v.OPENSTACK_GLANCE_URL;
  if (!glanceUrl || new URL(glanceUrl).hostname !== '127.0.0.1') return 0;
  const env: OpenStackEnv = {
    keystoneUrl: v.OPENSTACK_KEYSTONE_URL ?? '', glanceUrl, domain: v.OS_USER_DOMAIN_NAME ?? 'Default',
    admin: { login: v.OS_USERNAME ?? '', password: v.OS_PASSWORD ?? '', project: v.OS_PROJECT_NAME ?? '' },
    user: { login: '', password: '', project: '' },
  };
  const token = await adminToken(env);
  const since = new Date(sinceMs).toISOString().replace(/\.\d+Z$/, 'Z');
  let removed = 0;
  let next: string | undefined = `/v2/images?limit=200&created_at=gte:${since}`;
  for (let pages = 0; next !== undefined && pages < 50; pages++) {
    const res = await request(`${glanceUrl}${next}`, { headers: { 'x-auth-token': token, accept: 'application/json' } });
    const body = (await res.body.json()) as { images?: Array<{ id: string }>; next?: string };
    if (res.statusCode !== 200) throw new Error(`Glance list failed: ${res.statusCode}`);
    for (const { id } of body.images ?? []) {
      const del = await request(`${glanceUrl}/v2/images/${id}`, { method: 'DELETE', headers: { 'x-auth-token': token } });
      await del.body.dump();
      if (del.statusCode === 204) removed++;
    }
    next = body.next;
  }
  return removed;
}
