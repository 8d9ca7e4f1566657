// Secrets the server must read back (API secret keys, to recompute HMACs, wire contract §4; cloud
// passwords, to publish) are stored encrypted with AES-256-GCM under a key kept in `<data>/secret.key`
// (mode 0600). A copy of `forge.db` alone does not reveal them.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { createSecretFile, readSecretFile, SECRET_KEY_FILE } from '../data-folder';

export class SecretBox {
  private constructor(private readonly key: Buffer) {}

  /** Load the data dir's key, creating it (0600, fsync'd) on first use; a link there is refused. */
  static open(dataDir: string): SecretBox {
    const path = join(dataDir, SECRET_KEY_FILE);
    createSecretFile(path, randomBytes(32).toString('base64'));
    const key = Buffer.from((readSecretFile(path) ?? '').trim(), 'base64');
    if (key.length !== 32) throw new Error(`${path} does not hold a 256-bit key`);
    return new SecretBox(key);
  }

  seal(plain: string): string {
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', this.key, iv);
    const ct = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
    return ['v1', iv.toString('base64'), c.getAuthTag().toString('base64'), ct.toString('base64')].join(':');
  }

  open(sealed: string): string {
    const [v, iv, tag, ct] = sealed.split(':');
    if (v !== 'v1' || !iv || !tag || ct === undefined) throw new Error('unreadable sealed secret');
    const d = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64'));
    d.setAuthTag(Buffer.from(tag, 'base64'));
    return Buffer.concat([d.update(Buffer.from(ct, 'base64')), d.final()]).toString('utf8');
  }
}
