// The install profile as the API accepts it: checked by the model's rules (model/install-profile.ts),
// wherever a profile is written (appliance create/update, image generation), so that the image build
// gets only values it can apply. Passwords leave this module only as crypt(3) hashes (`encrypted: true`).
// Schema fields the build cannot honour never get here: the codec refuses them (model `refused`).
import { createHash } from 'node:crypto';
import { checkProfile } from '../../model/install-profile';
import type { Limits } from '../../model/limits';
import { redactRecord } from '../../model/redact';
import { installProfile, type InstallProfile, type OsUser } from '../../model/resources';
import { badRequest } from '../service-error';

/** The profile as responses show it: no password, not even its hash (`encrypted: true` says one is set). */
export function installProfileView(p: InstallProfile): InstallProfile {
  return redactRecord(installProfile, p);
}

/** crypt(3)'s salt alphabet. */
const CRYPT64 = './0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** What a password's salt is derived from: the template it belongs to, by name and version. */
export interface SaltSource {
  readonly name: string;
  readonly version: string;
}

/**
 * The salt of an account's password: 16 characters derived from the template's name and version and the
 * account's name, never from the password, so that one declaration gives the same /etc/shadow (and the
 * same image bytes) on any server, while a table precomputed for one template and account serves no other.
 */
export function passwordSalt(from: SaltSource, account: string): string {
  const d = createHash('sha256').update(`appliance-forge password salt\0${from.name}\0${from.version}\0${account}`).digest();
  return [...d.subarray(0, 16)].map((b) => CRYPT64[b & 63]).join('');
}

/** sha512-crypt (`$6$`, 5000 rounds) of a password with its derived salt: unixcrypt, ESM only. */
async function sha512crypt(plain: string, salt: string): Promise<string> {
  const { encrypt } = await import('unixcrypt');
  return encrypt(plain, `$6$${salt}`);
}

/**
 * The install profile to store: checked (400 naming the field), normalised, passwords hashed.
 * `previous` is the stored profile it replaces: an account sent without `password` keeps its stored
 * hash (fields left out keep their value, spec rule 4d); an empty `password` removes it.
 */
export async function checkInstallProfile(p: InstallProfile | undefined, limits: Pick<Limits, 'maxDiskMiB'>, salt: SaltSource, previous?: InstallProfile): Promise<InstallProfile | undefined> {
  if (!p) return undefined;
  const checked = checkProfile(p, limits);
  const [first] = checked.problems;
  if (first || !('profile' in checked)) throw badRequest(`installProfile.${first?.path ?? ''} ${first?.why ?? ''}`);
  const { rootUser, users } = checked.profile;
  return {
    ...checked.profile,
    rootUser: rootUser && { ...rootUser, ...(await passwordOf(rootUser, 'installProfile.rootUser', passwordSalt(salt, 'root'), previous?.rootUser)) },
    users: users && (await Promise.all(users.map(async (u, i) => {
      // Password login disabled and no password sent: the stored hash goes too.
      const keep = u.disablePasswordLogin && u.password === undefined ? undefined : previous?.users?.find((s) => s.name === u.name);
      return { ...u, ...(await passwordOf(u, `installProfile.users[${i}]`, passwordSalt(salt, u.name ?? ''), keep)) };
    }))),
  };
}

/** The stored form of an account's password: a hash with `encrypted: true`, or none. */
async function passwordOf(u: OsUser, path: string, salt: string, stored: OsUser | undefined): Promise<Pick<OsUser, 'password' | 'encrypted'>> {
  if (u.password === undefined) {
    if (u.encrypted && stored?.password === undefined) throw badRequest(`${path}.password is required when encrypted is true`);
    return stored?.password !== undefined ? { password: stored.password, encrypted: true } : { password: undefined, encrypted: undefined };
  }
  if (u.password === '') return { password: undefined, encrypted: undefined };
  return { password: u.encrypted ? u.password : await sha512crypt(u.password, salt), encrypted: true };
}
