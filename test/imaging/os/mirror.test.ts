// The host's apt sources → the mirror, on sample texts of both formats; user-given mirrors checked.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isImagingError } from '../../../src/imaging/errors';
import { DEFAULT_MIRROR, defaultMirror, validateMirror } from '../../../src/imaging/os';
import { mirrorFromSources, parseDeb822Sources, parseOneLineSources } from '../../../src/imaging/os/mirror';
import { scratch } from './helpers';

const DEB822 = `# Managed by the installer
# Types: deb
# URIs: http://commented.example/debian

Types: deb-src
URIs: http://src-only.example/debian
Suites: bookworm
Components: main

Types: deb
URIs: http://disabled.example/debian
Enabled: no
Suites: bookworm
Components: main

Types: deb deb-src
URIs: http://mirror.example/debian/
Suites: bookworm bookworm-updates
Components: main contrib
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: https://security.example/debian-security
Suites: bookworm-security
Components: main
Signed-By:
 -----BEGIN PGP PUBLIC KEY BLOCK-----
 .
 mQINBGPL0BUBEADmW5NlOAP9
 -----END PGP PUBLIC KEY BLOCK-----
`;

const ONE_LINE = `# deb http://commented.example/debian bookworm main
deb-src http://src.example/debian bookworm main
deb [arch=amd64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://one.example/debian bookworm main
deb http://one.example/debian bookworm-updates main # trailing comment
deb [signed-by=/k.gpg] http://sec.example/debian-security bookworm-security main
`;

describe('apt sources', () => {
  it('deb822: comments, deb-src and disabled stanzas skipped, multi-line fields kept apart', () => {
    expect(parseDeb822Sources(DEB822)).toEqual([
      { uri: 'http://mirror.example/debian/', suites: ['bookworm', 'bookworm-updates'] },
      { uri: 'https://security.example/debian-security', suites: ['bookworm-security'] },
    ]);
    expect(mirrorFromSources(parseDeb822Sources(DEB822))).toEqual({ archive: 'http://mirror.example/debian', security: 'https://security.example/debian-security' });
  });

  it('one-line: options in brackets, comments and deb-src skipped', () => {
    expect(parseOneLineSources(ONE_LINE)).toEqual([
      { uri: 'http://one.example/debian', suites: ['bookworm'] },
      { uri: 'http://one.example/debian', suites: ['bookworm-updates'] },
      { uri: 'http://sec.example/debian-security', suites: ['bookworm-security'] },
    ]);
    expect(mirrorFromSources(parseOneLineSources(ONE_LINE))).toEqual({ archive: 'http://one.example/debian', security: 'http://sec.example/debian-security' });
  });

  it('no http source: none (cdrom and file sources are not mirrors)', () => {
    expect(mirrorFromSources(parseOneLineSources('deb cdrom:[Debian 12]/ bookworm main\ndeb file:///srv/repo ./\n'))).toBeUndefined();
  });

  const etc = scratch('etc');
  afterAll(() => etc.cleanup());

  it('reads a host: deb822 files first, then sources.list; the default when there is nothing', () => {
    const a = join(etc.path, 'a');
    mkdirSync(join(a, 'sources.list.d'), { recursive: true });
    writeFileSync(join(a, 'sources.list.d', 'debian.sources'), DEB822);
    writeFileSync(join(a, 'sources.list'), ONE_LINE);
    expect(defaultMirror(a)).toEqual({ archive: 'http://mirror.example/debian', security: 'https://security.example/debian-security' });
    const b = join(etc.path, 'b');
    mkdirSync(b);
    writeFileSync(join(b, 'sources.list'), 'deb http://only.example/debian bookworm main\n');
    expect(defaultMirror(b)).toEqual({ archive: 'http://only.example/debian', security: DEFAULT_MIRROR.security });
    expect(defaultMirror(join(etc.path, 'none'))).toEqual(DEFAULT_MIRROR);
  });
});

describe('a mirror given by a user', () => {
  it('must be http(s), without credentials or query', () => {
    expect(validateMirror({ archive: 'https://m.example/debian/' })).toEqual({ archive: 'https://m.example/debian' });
    for (const bad of ['file:///srv/debian', 'ftp://m.example/debian', 'not a url', 'http://u:p@m.example/debian', 'http://m.example/debian?x=1']) {
      let err: unknown;
      try {
        validateMirror({ archive: bad });
      } catch (e) {
        err = e;
      }
      expect(isImagingError(err, 'input'), bad).toBe(true);
    }
    expect(() => validateMirror({ archive: 'http://m.example/debian', security: 'file:///x' })).toThrow(/security mirror must be an http/);
  });
});
