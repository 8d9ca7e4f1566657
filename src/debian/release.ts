// A suite's InRelease: its clearsigned text checked with gpgv against the Debian archive keyring, then
// the signed part read as a deb822 paragraph (Date, Version, the SHA256 file list).
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../host/child';
import { toolsMissingMessage } from '../host/tools';
import { DebianIndexError } from './errors';
import { DEBIAN_ARCHIVE } from '../model/releases';

export const DEBIAN_KEYRING = DEBIAN_ARCHIVE.keyring;

export interface ReleaseFile {
  readonly origin: string;
  readonly suite: string;
  readonly codename: string;
  /** Point release (`12.15`), or what the suite says (`12-updates`). */
  readonly version: string;
  /** ISO-8601 from the `Date` field. */
  readonly date: string;
  /** SHA-256 and size of each listed file, by path relative to the suite (`main/binary-ARCH/Packages.xz`); a fetch needs its entry. */
  readonly sha256: ReadonlyMap<string, { readonly sha256: string; readonly size: number }>;
}

/**
 * The signed text of a clearsigned InRelease, after gpgv found a good signature from `keyring`. Only what
 * gpgv writes out is returned: text outside the signed part never reaches the parser.
 */
export async function verifyInRelease(signed: Buffer, keyring = DEBIAN_KEYRING): Promise<string> {
  if (!existsSync(keyring)) throw new DebianIndexError('missing-tool', keyring === DEBIAN_KEYRING ? toolsMissingMessage([keyring]) : `the keyring ${keyring} does not exist`);
  const dir = await mkdtemp(join(tmpdir(), 'af-inrelease-'));
  try {
    const input = join(dir, 'InRelease');
    await writeFile(input, signed);
    const gpgv = await run({ command: 'gpgv', args: ['--keyring', keyring, '--output', '-', input], collect: true, anyExit: true }, (f) =>
      new DebianIndexError(f.kind === 'missing' ? 'missing-tool' : 'malformed', f.message),
    );
    if (gpgv.code === 0) return gpgv.stdout;
    const why = gpgv.stderr.split('\n').filter((l) => /BAD|no signature|not found|public key|signature/i.test(l)).join('; ');
    throw new DebianIndexError('bad-signature', `InRelease has no good signature from ${keyring}${why ? `: ${why}` : ''}`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Reads the signed text of an InRelease (or a plain Release file). */
export function parseRelease(text: string): ReleaseFile {
  const field = (name: string): string | undefined => new RegExp(`^${name}:[ \\t]*(.*)$`, 'm').exec(text)?.[1]?.trim();
  const date = field('Date');
  if (!date || Number.isNaN(Date.parse(date))) throw new DebianIndexError('malformed', 'Release file has no valid Date');
  const sha256 = new Map<string, { sha256: string; size: number }>();
  const block = /^SHA256:[ \t]*\n((?:[ \t].*\n?)*)/m.exec(text)?.[1] ?? '';
  for (const line of block.split('\n')) {
    const m = /^\s+([0-9a-f]{64})\s+(\d+)\s+(\S+)\s*$/.exec(line);
    if (m) sha256.set(m[3]!, { sha256: m[1]!, size: Number(m[2]) });
  }
  const codename = field('Codename') ?? '';
  return {
    origin: field('Origin') ?? '',
    suite: field('Suite') ?? codename,
    codename,
    version: field('Version') ?? '',
    date: new Date(date).toISOString(),
    sha256,
  };
}
