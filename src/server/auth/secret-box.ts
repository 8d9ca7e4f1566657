// Secrets the server must read back (API secret keys, to recompute HMACs, wire contract §4; cloud
// passwords, to publish) are stored encrypted with AES-256-GCM under a key kept in `<data>/secret.key`
// (mode 0600). A copy of `forge.db` alone does not reveal them.
// The nodes of a farm share one key (`serve --secret-key-file`): what one seals, another opens.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { createSecretFile, readSecretFile, SECRET_KEY_FILE } from '../data-folder';
import { ServerConfigError } from '../config-error';

export class SecretBox {
  private constructor(
    private readonly key: Buffer,
    /** The key file, for the messages that name it. */
    readonly file: string,
  ) {}

  /** Load the data dir's key, creating it (0600, fsync'd) on first use; a link there is refused. */
  static open(dataDir: string): SecretBox {
    const path = join(dataDir, SECRET_KEY_FILE);
    createSecretFile(path, randomBytes(32).toString('base64'));
    return SecretBox.fromFile(path);
  }

  /** Load a key file made before (the farm's shared key: never created here, or nodes would each make their own). */
  static fromFile(path: string): SecretBox {
    const text = readSecretFile(path);
    if (text === undefined) throw new ServerConfigError(`the secret key file ${path} does not exist: give every node of a farm the same key file (the first node's <data-dir>/${SECRET_KEY_FILE})`);
    const key = Buffer.from(text.trim(), 'base64');
    if (key.length !== 32) throw new ServerConfigError(`${path} does not hold a 256-bit key (base64 of 32 bytes, as appliance-forge writes ${SECRET_KEY_FILE})`);
    return new SecretBox(key, path);
  }

  /** A 256-bit key for `purpose` (HKDF-SHA256 of the box's key): every node of a farm derives the same one. */
  derive(purpose: string): Buffer {
    return Buffer.from(hkdfSync('sha256', this.key, Buffer.alloc(0), `appliance-forge ${purpose}`, 32));
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
