// Test helpers: start (or reuse) the real loopback PostgreSQL 15 of ../shared/postgres, read its env
// file, and give each server a database of its own (made with the test role, dropped at the end), so
// that files running at the same time never see each other's records or jobs.
import { execFile, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { SHARED } from './shared';
import { parseEnvFile } from './s3';

export const START_POSTGRES = join(SHARED, 'postgres/start-postgres.sh');
const run = promisify(execFile);

/** Why the service cannot start on this machine, or undefined when it can. */
export function postgresUnavailable(): string | undefined {
  if (!existsSync('/etc/debian_version')) return 'not a Debian machine (start-postgres.sh runs Debian 12 packages)';
  if (process.getuid?.() !== 0) return 'not root (start-postgres.sh starts its cluster as the postgres user)';
  if (!existsSync(START_POSTGRES)) return `${START_POSTGRES} not found`;
  // The script installs the package when it is missing: it can only if apt knows it.
  if (!existsSync('/usr/lib/postgresql/15/bin/initdb')) {
    const policy = spawnSync('apt-cache', ['policy', 'postgresql-15'], { encoding: 'utf8' });
    if (policy.status !== 0 || !/Candidate: (?!\(none\))/.test(policy.stdout)) return 'the Debian package postgresql-15 is neither installed nor available from apt';
  }
  return undefined;
}

let started: Promise<string> | undefined;

/** The cluster's URL (its `forge` database, `forge` role with CREATEDB), or why tests must skip here. */
export async function startPostgres(): Promise<{ url: string } | { skip: string }> {
  const skip = postgresUnavailable();
  if (skip !== undefined) return { skip };
  started ??= (async () => {
    const { stdout } = await run('bash', [START_POSTGRES], { encoding: 'utf8', timeout: 300_000 });
    const envFile = stdout.trim().split('\n').pop() ?? '';
    if (!existsSync(envFile)) throw new Error(`start-postgres.sh printed no env file (last line: ${JSON.stringify(envFile)})`);
    const url = parseEnvFile(readFileSync(envFile, 'utf8')).DATABASE_URL;
    if (!url) throw new Error(`${envFile} has no DATABASE_URL`);
    return url;
  })();
  return { url: await started };
}

/** The URL of `base` with another database. */
export function withDatabase(base: string, database: string): string {
  const u = new URL(base);
  u.pathname = `/${database}`;
  return u.toString();
}

/** A new, empty database of the cluster; `drop()` ends its connections and removes it. */
export async function freshDatabase(base: string): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const name = `af_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return {
    url: withDatabase(base, name),
    name,
    drop: async () => {
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

/** One query on its own connection (an independent reader of what a store wrote). */
export async function sql<T = Record<string, unknown>>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(text, values)).rows as T[];
  } finally {
    await c.end();
  }
}
