// An independent HMAC-SHA1 implementation for test vectors (wire contract §4): the openssl binary.
import { execFileSync } from 'node:child_process';

/** base64(HMAC-SHA1(key, data)) computed by `openssl dgst -sha1 -hmac KEY -binary | base64`. */
export function opensslSignature(key: string, data: string): string {
  return execFileSync('sh', ['-c', 'openssl dgst -sha1 -hmac "$KEY" -binary | base64'], {
    input: Buffer.from(data, 'utf8'),
    env: { ...process.env, KEY: key },
  })
    .toString('utf8')
    .trim();
}
