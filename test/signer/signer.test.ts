// Signer vectors from an independent implementation (openssl), never from the code under test.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { parseSignedTarget, signTarget, verifySignature, basicAuthorization, parseBasicAuthorization } from '../../src/auth/signer';
import { encodeComponent, queryString } from '../../src/client/wire';
import { opensslSignature } from './openssl';

const KEY = { publicKey: 'PUBKEY-123', secretKey: 's3cr3t/K+ey=' };

describe('signTarget against openssl', () => {
  // Targets as the client sends them: already percent-encoded, including characters that must be.
  const targets = [
    'users/alice/appliances',
    `users/alice/appliances${queryString({ query: "name=='web *';version=='1.0'" })}`,
    `distributions/1/pkgs${queryString({ query: "name=='caf\u00e9*'", count: 10, offset: 0, descending: true })}`,
    `users/al%20ice/mysoftware${queryString({ query: "description=='it''s = ok; (really)!'" })}`,
    `users/alice/images${queryString({ img: '\u65e5\u672c\u8a9e \u{1F600}' })}`,
  ];
  it.each(targets)('%s', (target) => {
    const signed = signTarget(target, KEY);
    const withKey = `${target}${target.includes('?') ? '&' : '?'}apiKey=${KEY.publicKey}`;
    const sig = opensslSignature(KEY.secretKey, withKey);
    expect(sig).toHaveLength(28);
    expect(signed).toBe(`${withKey}&signature=${encodeURIComponent(sig)}`);
  });

  it('the query encoder leaves nothing that needs escaping in a signed string', () => {
    const q = queryString({ query: "a b'=;*(é)!~" });
    expect(q).toBe('?query=a%20b%27%3D%3B%2A%28%C3%A9%29%21~');
    expect(encodeComponent("'*")).toBe('%27%2A');
  });

  it('random targets and keys agree with openssl, and parse back and verify', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 12 }),
        fc.string({ minLength: 0, maxLength: 30, unit: 'grapheme' }),
        fc.stringMatching(/^[A-Za-z0-9+/=]{8,40}$/),
        (user, query, secret) => {
          const target = `users/${encodeURIComponent(user)}/appliances${queryString({ query })}`;
          const signed = signTarget(target, { publicKey: 'PK', secretKey: secret });
          const at = signed.lastIndexOf('&signature=');
          expect(decodeURIComponent(signed.slice(at + 11))).toBe(opensslSignature(secret, signed.slice(0, at)));
          const parsed = parseSignedTarget(`/api/${signed}`, '/api');
          expect(parsed).toBeDefined();
          expect(verifySignature(secret, parsed!)).toBe(true);
          expect(verifySignature(`${secret}x`, parsed!)).toBe(false);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('a tampered target does not verify', () => {
    const signed = signTarget('users/alice/appliances?count=1', KEY);
    const parsed = parseSignedTarget(`/api/${signed.replace('count=1', 'count=2')}`, '/api')!;
    expect(verifySignature(KEY.secretKey, parsed)).toBe(false);
  });
});

describe('Basic authorization', () => {
  it('matches base64 from openssl', async () => {
    const { execFileSync } = await import('node:child_process');
    const b64 = execFileSync('openssl', ['base64', '-A'], { input: 'alice:pa:ss\u00e9' }).toString().trim();
    expect(basicAuthorization('alice', 'pa:ss\u00e9')).toBe(`Basic ${b64}`);
    expect(parseBasicAuthorization(`Basic ${b64}`)).toEqual({ login: 'alice', password: 'pa:ss\u00e9' });
  });
});
