// GET of one archive file over undici, with bounded time and size. A file is written next to its
// final name, its SHA-256 computed while it streams, and renamed only when size and hash match.
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Agent, request, type Dispatcher } from 'undici';
import { DebianIndexError } from './errors';
import { messageOf } from '../errors';

/** One agent for the module: deb.debian.org is a CDN, connections are worth keeping. */
const agent: Dispatcher = new Agent({ connectTimeout: 20_000, headersTimeout: 30_000, bodyTimeout: 60_000 });

async function get(url: string, signal?: AbortSignal): Promise<Dispatcher.ResponseData> {
  let res: Dispatcher.ResponseData;
  try {
    res = await request(url, { dispatcher: agent, signal: signal ?? null });
  } catch (e) {
    throw new DebianIndexError('unreachable', `GET ${url}: ${messageOf(e)}`);
  }
  if (res.statusCode !== 200) {
    await res.body.dump();
    throw new DebianIndexError('unreachable', `GET ${url}: HTTP ${res.statusCode}`);
  }
  return res;
}

/** A small file (InRelease) in memory, refused past `maxBytes`. */
export async function fetchSmall(url: string, maxBytes: number, signal?: AbortSignal): Promise<Buffer> {
  const res = await get(url, signal);
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const c of res.body) {
    n += (c as Buffer).length;
    if (n > maxBytes) {
      res.body.destroy();
      throw new DebianIndexError('malformed', `GET ${url}: larger than ${maxBytes} bytes`);
    }
    chunks.push(c as Buffer);
  }
  return Buffer.concat(chunks);
}

/** Downloads `url` to `file` if its size and SHA-256 are `expected`; nothing is left at `file` otherwise. */
export async function fetchVerified(url: string, file: string, expected: { sha256: string; size: number }, signal?: AbortSignal): Promise<void> {
  const res = await get(url, signal);
  const hash = createHash('sha256');
  let n = 0;
  const count = new Transform({
    transform(chunk: Buffer, _enc, done) {
      n += chunk.length;
      if (n > expected.size) return done(new DebianIndexError('checksum', `GET ${url}: more than the ${expected.size} bytes InRelease lists`));
      hash.update(chunk);
      done(null, chunk);
    },
  });
  // Per process: two servers sharing a data dir may fetch the same file at once.
  const part = `${file}.${process.pid}.part`;
  try {
    await pipeline(res.body, count, createWriteStream(part));
    const got = hash.digest('hex');
    if (n !== expected.size || got !== expected.sha256) {
      throw new DebianIndexError('checksum', `GET ${url}: ${n} bytes with SHA-256 ${got}, InRelease lists ${expected.size} bytes with ${expected.sha256}`);
    }
    await rename(part, file);
  } catch (e) {
    await rm(part, { force: true });
    if (e instanceof DebianIndexError) throw e;
    throw new DebianIndexError('unreachable', `GET ${url}: ${messageOf(e)}`);
  }
}
