// Test helpers: start (or reuse) the real loopback S3 of ../shared/s3 (OpenStack Swift 2.30 with s3api),
// read its env file, and give each test file a fresh random prefix in its bucket, so that files running
// at the same time never see each other's objects. An independent client (built here with the settings
// the service's README lists, not by the adapter under test) checks what the adapter left behind.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { promisify } from 'node:util';
import {
  AbortMultipartUploadCommand, DeleteObjectsCommand, ListMultipartUploadsCommand, ListObjectsV2Command, S3Client,
  type MultipartUpload, type _Object,
} from '@aws-sdk/client-s3';
import { SHARED } from './shared';

export const START_S3 = join(SHARED, 's3/start-s3.sh');

export interface S3Service {
  /** The env file's variables (S3_ENDPOINT, S3_BUCKET, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY…). */
  readonly env: Record<string, string>;
  readonly endpoint: string;
  readonly region: string;
  readonly bucket: string;
  /** This test file's own folder of the bucket: `forge-tests/<random>`. */
  readonly prefix: string;
  readonly credentials: { readonly accessKeyId: string; readonly secretAccessKey: string };
  /** The adapter's configuration string for `<prefix>[/sub]`, endpoint, region and path style in it. */
  url(sub?: string): string;
  /** A client of its own for checks: the README's settings for Swift's s3api. */
  readonly client: S3Client;
  /** Every object under `<prefix>/<sub>/` (or the whole prefix), all pages. */
  objects(sub?: string): Promise<_Object[]>;
  /** Every multipart upload in progress under it. */
  uploads(sub?: string): Promise<MultipartUpload[]>;
  /** Names in Swift's hidden `<bucket>+segments` container under it (parts of multipart uploads), through Swift's own API. */
  segments(sub?: string): Promise<string[]>;
  /** Removes everything under `<prefix>/<sub>/` (objects and multipart uploads); the client stays open. */
  remove(sub: string): Promise<void>;
  /** Removes everything under the prefix (objects and multipart uploads) and closes the client. */
  cleanUp(): Promise<void>;
}

const run = promisify(execFile);

/**
 * Why the service cannot start on this machine, or undefined when it can: a test file decides at
 * once whether it skips (a failure of the script on a machine that can run it fails the tests).
 */
export function s3Unavailable(): string | undefined {
  if (!existsSync('/etc/debian_version')) return 'not a Debian machine (start-s3.sh installs Debian 12 packages)';
  if (process.getuid?.() !== 0) return 'not root (start-s3.sh installs packages and starts system services)';
  if (!existsSync(START_S3)) return `${START_S3} not found`;
  return undefined;
}

/** The running service with a fresh prefix, or why these tests must skip on this machine. */
export async function startS3(): Promise<S3Service | { skip: string }> {
  const skip = s3Unavailable();
  if (skip !== undefined) return { skip };
  const envFile = await startScript();
  const env = parseEnvFile(readFileSync(envFile, 'utf8'));
  const need = (k: string): string => {
    const v = env[k];
    if (!v) throw new Error(`${envFile} lacks ${k}`);
    return v;
  };
  const endpoint = need('S3_ENDPOINT');
  const region = need('S3_REGION');
  const bucket = need('S3_BUCKET');
  const credentials = { accessKeyId: need('AWS_ACCESS_KEY_ID'), secretAccessKey: need('AWS_SECRET_ACCESS_KEY') };
  const prefix = `forge-tests/${randomBytes(6).toString('hex')}`;
  const client = new S3Client({
    endpoint, region, credentials, forcePathStyle: true,
    requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const under = (sub?: string): string => `${prefix}/${sub ? `${sub}/` : ''}`;
  const objects = async (sub?: string): Promise<_Object[]> => {
    const out: _Object[] = [];
    let token: string | undefined;
    do {
      const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: under(sub), ...(token ? { ContinuationToken: token } : {}) }));
      out.push(...(page.Contents ?? []));
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return out;
  };
  const uploads = async (sub?: string): Promise<MultipartUpload[]> => {
    const page = await client.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: under(sub) }));
    return page.Uploads ?? [];
  };
  const segments = async (sub?: string): Promise<string[]> => {
    const auth = await fetch(need('ST_AUTH'), { headers: { 'x-auth-user': need('ST_USER'), 'x-auth-key': need('ST_KEY') } });
    const storage = auth.headers.get('x-storage-url');
    const token = auth.headers.get('x-auth-token');
    if (!auth.ok || !storage || !token) throw new Error(`Swift auth failed: ${auth.status}`);
    const res = await fetch(`${storage}/${bucket}+segments?prefix=${encodeURIComponent(under(sub))}`, { headers: { 'x-auth-token': token } });
    if (res.status === 404) return []; // no multipart upload was ever made in this bucket
    if (!res.ok) throw new Error(`Swift listing of ${bucket}+segments failed: ${res.status}`);
    return (await res.text()).split('\n').filter(Boolean);
  };
  return {
    env, endpoint, region, bucket, prefix, credentials, client, objects, uploads, segments,
    url: (sub) => `s3://${bucket}/${prefix}${sub ? `/${sub}` : ''}?endpoint=${encodeURIComponent(endpoint)}&region=${region}&path-style=true`,
    remove: async (sub) => {
      await removeUnder(client, bucket, under(sub));
    },
    cleanUp: async () => {
      await removeUnder(client, bucket, under());
      client.destroy();
    },
  };
}

/** Aborts the multipart uploads and deletes the objects under `prefix` (Swift drops an upload's segments with it). */
async function removeUnder(client: S3Client, bucket: string, prefix: string): Promise<number> {
  let removed = 0;
  for (let pages = 0; pages < 100; pages++) {
    const page = await client.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: prefix }));
    for (const u of page.Uploads ?? []) await client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: u.Key, UploadId: u.UploadId }));
    if (!page.IsTruncated) break;
  }
  // Deleting while listing: each round lists the first page of what is left, so no continuation token goes stale.
  for (let rounds = 0; rounds < 1000; rounds++) {
    const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, MaxKeys: 1000 }));
    const keys = (page.Contents ?? []).flatMap((o) => (o.Key ? [{ Key: o.Key }] : []));
    if (keys.length === 0) break;
    await client.send(new DeleteObjectsCommand({ Bucket: bucket, ChecksumAlgorithm: 'MD5', Delete: { Objects: keys, Quiet: true } }));
    removed += keys.length;
  }
  return removed;
}

/**
 * At the end of a run: removes every test file's prefix (`forge-tests/…`) from the loopback S3 if it runs,
 * without starting it. Farm builds and large uploads leave GiBs there; Swift refuses writes (507) once
 * the disk nears full, which made a whole run's farm suites fail with 500s.
 */
export async function sweepS3Tests(): Promise<number> {
  const envFile = `${process.env.FORGE_S3_STATE_DIR ?? '/var/tmp/forge-s3'}/s3.env`;
  if (!existsSync(envFile)) return 0;
  const env = parseEnvFile(readFileSync(envFile, 'utf8'));
  const { S3_ENDPOINT: endpoint, S3_REGION: region, S3_BUCKET: bucket, AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secretAccessKey } = env;
  if (!endpoint || !region || !bucket || !accessKeyId || !secretAccessKey || new URL(endpoint).hostname !== '127.0.0.1') return 0;
  const client = new S3Client({
    endpoint, region, credentials: { accessKeyId, secretAccessKey }, forcePathStyle: true, maxAttempts: 1,
    requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED',
  });
  try {
    return await removeUnder(client, bucket, 'forge-tests/');
  } finally {
    client.destroy();
  }
}

/** Runs the start script; retried a few times when another install holds apt's lock. Its last stdout line is the env file. */
async function startScript(): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    try {
      const { stdout } = await run('bash', [START_S3], { encoding: 'utf8', timeout: 600_000, maxBuffer: 16 * 1024 * 1024 });
      const envFile = stdout.trim().split('\n').pop() ?? '';
      if (!existsSync(envFile)) throw new Error(`start-s3.sh printed no env file (last line: ${JSON.stringify(envFile)})`);
      return envFile;
    } catch (e) {
      const stderr = String((e as { stderr?: unknown }).stderr ?? '');
      if (attempt < 5 && /lock|dpkg was interrupted/i.test(stderr)) {
        await delay(15_000);
        continue;
      }
      throw new Error(`start-s3.sh failed: ${stderr.trim().split('\n').slice(-5).join('\n') || String(e)}`, { cause: e });
    }
  }
}

export function parseEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^\s*(?:export\s+)?([A-Z0-9_]+)=(.*)$/.exec(line);
    if (m) out[m[1]!] = m[2]!.replace(/^(['"])(.*)\1$/, '$2');
  }
  return out;
}
