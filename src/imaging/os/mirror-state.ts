// The state of a mirror's indexes, for the cache key: the sha256 of each suite's InRelease (a few
// hundred kB each). A point release or a security update changes it, so it gives a new layer. The
// newest of their `Date:` fields is the layer's SOURCE_DATE_EPOCH (docs/images.md "Reproducible images").
import { request } from 'undici';
import { Digester } from '../../digest';
import { AbortedError, messageOf } from '../../errors';
import { ImagingError } from '../errors';
import type { OsLayerSpec } from '../stages';

const MAX_INRELEASE = 8 * 1024 * 1024;

/** The InRelease URLs a spec's sources read, in a fixed order. */
export function inReleaseUrls(spec: Pick<OsLayerSpec, 'suite' | 'mirror'>): string[] {
  const { archive, security } = spec.mirror;
  return [
    `${archive}/dists/${spec.suite}/InRelease`,
    `${archive}/dists/${spec.suite}-updates/InRelease`,
    ...(security ? [`${security}/dists/${spec.suite}-security/InRelease`] : []),
  ];
}

export interface MirrorState {
  /** `url → sha256` of each InRelease. */
  readonly indexes: Record<string, string>;
  /** The newest `Date:` of them, in seconds since the epoch. */
  readonly releaseDate: number;
}

/** The `Date:` field of a Release (or clearsigned InRelease) text, in seconds; undefined without one. */
export function releaseDateOf(text: string): number | undefined {
  const m = /^Date:\s*(.+?)\s*$/m.exec(text);
  const ms = m ? Date.parse(m[1]!) : NaN;
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : undefined;
}

/** Each InRelease's sha256 and their newest date; an unreachable mirror, a missing suite or an undated index is an error naming it. */
export async function mirrorState(spec: Pick<OsLayerSpec, 'suite' | 'mirror'>, signal?: AbortSignal): Promise<MirrorState> {
  // Side by side: each is a round trip to the mirror, and every build (a cached layer's too) asks them.
  const urls = inReleaseUrls(spec);
  const got = await Promise.all(urls.map((url) => digestOf(url, signal)));
  const indexes: Record<string, string> = {};
  for (const [i, url] of urls.entries()) indexes[url] = got[i]!.sha256;
  return { indexes, releaseDate: Math.max(0, ...got.map((g) => g.date)) };
}

/** The fields come first: the head of the file is enough to find the date. */
const HEAD_BYTES = 64 * 1024;

async function digestOf(url: string, signal?: AbortSignal): Promise<{ sha256: string; date: number }> {
  const timeout = AbortSignal.timeout(30_000);
  const both = signal ? AbortSignal.any([signal, timeout]) : timeout;
  let res: Awaited<ReturnType<typeof request>>;
  try {
    res = await request(url, { signal: both });
  } catch (e) {
    if (signal?.aborted) throw new AbortedError('image build aborted');
    const why = timeout.aborted ? 'no answer in 30 s' : messageOf(e);
    throw new ImagingError('tool', `Debian mirror unreachable: ${new URL(url).origin} (${url}: ${why})`, e);
  }
  if (res.statusCode === 404) {
    await res.body.dump();
    throw new ImagingError('input', `the mirror has no such suite: ${url} is 404 Not Found`);
  }
  if (res.statusCode !== 200) {
    await res.body.dump();
    throw new ImagingError('tool', `Debian mirror error: ${url} answered ${res.statusCode}`);
  }
  const d = new Digester(['sha256']);
  let head = '';
  for await (const chunk of res.body as AsyncIterable<Buffer>) {
    d.update(chunk);
    if (head.length < HEAD_BYTES) head += chunk.toString('latin1', 0, HEAD_BYTES - head.length);
    if (d.size > MAX_INRELEASE) {
      res.body.destroy();
      throw new ImagingError('tool', `Debian mirror error: ${url} is larger than ${MAX_INRELEASE} bytes`);
    }
  }
  const date = releaseDateOf(head);
  if (date === undefined) throw new ImagingError('tool', `Debian mirror error: ${url} has no Date field`);
  return { sha256: d.digests().sha256, date };
}
