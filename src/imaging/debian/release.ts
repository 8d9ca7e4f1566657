// A suite's InRelease: its clearsigned text checked with gpgv against the Debian archive keyring, then
// the signed part read as a deb822 paragraph (Date, Version, the SHA256 file list).
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DebianIndexError } from './errors';

export const DEBIAN_KEYRING = '/usr/share/keyrings/debian-archive-keyring.gpg';

export interface ReleaseFile {
  readonly origin: string;
  readonly suite: string;
  readonly codename: string;
  /** Point release (`12.15`), or what the suite says (`12-updates`). */
  readonly version: string;
  /** ISO-8601 from the `Date` field. */
  readonly date: string;
  /** SHA-256 and size of each listed file, by path relative to the suite (`main/binary-amd64/Packages.xz`); a fetch needs its entry. */
  readonly sha256: ReadonlyMap<string, { readonly sha256: string; readonly size: number }>;
}

/**
 * The signed text of a clearsigned InRelease, after gpgv found a good signature from `keyring`. Only what
 * gpgv writes out is returned: text outside the signed part never reaches the parser.
 */
export async function verifyInRelease(signed: Buffer, keyring = DEBIAN_KEYRING): Promise<string> {
  if (!existsSync(keyring)) throw new DebianIndexError('missing-tool', `keyring ${keyring} not found: install the debian-archive-keyring package`);
  const dir = await mkdtemp(join(tmpdir(), 'af-inrelease-'));
  try {
    const input = join(dir, 'InRelease');
    await writeFile(input, signed);
    return await new Promise<string>((resolve, reject) => {
      execFile('gpgv', ['--keyring', keyring, '--output', '-', input], { maxBuffer: 4 << 20, encoding: 'utf8' }, (err, stdout, stderr) => {
        if (!err) return resolve(stdout);
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
          return reject(new DebianIndexError('missing-tool', 'gpgv not found: install the gpgv package'));
        }
        const why = stderr.split('\n').filter((l) => /BAD|no signature|not found|public key|signature/i.test(l)).join('; ');
        reject(new DebianIndexError('bad-signature', `InRelease has no good signature from ${keyring}${why ? `: ${why}` : ''}`));
      });
    });
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
