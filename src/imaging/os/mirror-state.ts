// The state of a mirror's indexes, for the cache key: the sha256 of each suite's InRelease (a few
// hundred kB each). A point release or a security update changes it, so it gives a new layer.
import { request } from 'undici';
import { Digester } from '../../digest';
import { AbortedError, messageOf } from '../../errors';
import { ImagingError } from '../errors';
import type { OsLayerSpec } from '../system';

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

/** `url → sha256` of each InRelease; an unreachable mirror or a missing suite is an error naming it. */
export async function mirrorState(spec: Pick<OsLayerSpec, 'suite' | 'mirror'>, signal?: AbortSignal): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const url of inReleaseUrls(spec)) out[url] = await digestOf(url, signal);
  return out;
}

async function digestOf(url: string, signal?: AbortSignal): Promise<string> {
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
  for await (const chunk of res.body as AsyncIterable<Buffer>) {
    d.update(chunk);
    if (d.size > MAX_INRELEASE) {
      res.body.destroy();
      throw new ImagingError('tool', `Debian mirror error: ${url} is larger than ${MAX_INRELEASE} bytes`);
    }
  }
  return d.digests().sha256;
}
