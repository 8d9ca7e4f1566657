// Cloud accounts (wire contract §9): the password is write-only, stored sealed, and answers carry
// `secretsMissing=true` in its place.
import { isHttpUrl } from '../../model/field-rules';
import { OPENSTACK_ACCOUNT_FIELDS, openStackAccountFields, type CredAccount } from '../../model/resources';
import type { Ctx } from '../context';
import { badRequest } from '../service-error';
import type { AccountDoc } from '../store/docs';
import { accountKey } from '../store/keys';
import { accountView } from '../views/account';
import type { Located } from '../views/stamp';
import { ifMatch, ownedRecord, requireText } from './records';

/** The account's endpoints (checked as http(s) URLs and against the allowed endpoints) and what is stored in the
 * clear (every field of the model's OpenStack account but the secret, which is sealed apart). */
const URL_FIELDS = OPENSTACK_ACCOUNT_FIELDS.filter((f): f is typeof f & keyof AccountDoc => f.endsWith('Url'));
const CLEAR_FIELDS = OPENSTACK_ACCOUNT_FIELDS.filter((f): f is typeof f & keyof AccountDoc => !openStackAccountFields[f].secret);

/** The stored part of an account from a request (also an account embedded in a publication). */
export function accountFromBody(v: CredAccount, prev?: AccountDoc): AccountDoc {
  const tp = v.targetPlatform;
  if (tp && ((tp.type && tp.type.toLowerCase() !== 'openstack') || (tp.name && tp.name.toLowerCase() !== 'openstack'))) {
    throw badRequest('only OpenStack accounts are supported (targetPlatform openstack)');
  }
  for (const f of URL_FIELDS) {
    const u = v[f];
    if (u !== undefined && !isHttpUrl(u)) throw badRequest(`${f} must be an http(s) URL`);
  }
  const out: AccountDoc = { ...(prev ?? { kind: 'CredAccountOpenStack', name: '' }), kind: 'CredAccountOpenStack' };
  if (v.name !== undefined) out.name = v.name.trim();
  for (const f of CLEAR_FIELDS) if (v[f] !== undefined) out[f] = v[f];
  out.keystoneVersion ??= 'v3';
  return out;
}

/** 400 unless the account's endpoints are among the server's allowed cloud endpoints (when it lists any). */
export function checkCloudEndpoints(ctx: Pick<Ctx, 'cloudEndpoints'>, d: AccountDoc): void {
  if (!ctx.cloudEndpoints) return;
  for (const f of URL_FIELDS) {
    const u = d[f];
    if (u !== undefined && !ctx.cloudEndpoints.some((e) => withinPrefix(u, e))) {
      throw badRequest(`${f} is not one of the cloud endpoints this server may connect to`);
    }
  }
}

/** Same origin, and the path at or below the prefix's path. */
function withinPrefix(url: string, prefix: string): boolean {
  try {
    const u = new URL(url);
    const p = new URL(prefix);
    const base = p.pathname.replace(/\/+$/, '');
    return u.origin === p.origin && (u.pathname === base || u.pathname.startsWith(`${base}/`) || base === '');
  } catch {
    return false;
  }
}

const taken = (name: string): string => `an account named ${JSON.stringify(name)} already exists`;

export const accounts = {
  async list(ctx: Ctx, owner: string): Promise<Array<Located<CredAccount>>> {
    return (await ctx.store.list('account', owner)).map(accountView);
  },

  async get(ctx: Ctx, owner: string, caid: string): Promise<Located<CredAccount>> {
    return accountView(await ownedRecord(ctx.store, 'account', owner, caid));
  },

  async create(ctx: Ctx, owner: string, value: CredAccount): Promise<Located<CredAccount>> {
    const d = accountFromBody(value);
    requireText(d.name, 'name');
    requireText(d.keystoneUrl, 'keystoneUrl');
    checkCloudEndpoints(ctx, d);
    const secret = value.password ? ctx.box.seal(value.password) : null;
    return accountView(await ctx.store.insert('account', { owner, uniqueKey: accountKey(d.name), doc: d, secret }, taken(d.name)));
  },

  /** `body` is read once the record is found and its precondition holds (a 404 or 412 before a 400). */
  async update(ctx: Ctx, owner: string, caid: string, body: () => CredAccount, precondition?: string | string[]): Promise<Located<CredAccount>> {
    const row = await ownedRecord(ctx.store, 'account', owner, caid);
    ifMatch(precondition, accountView(row));
    const value = body();
    const d = accountFromBody(value, row.doc);
    requireText(d.name, 'name');
    checkCloudEndpoints(ctx, d);
    const secret = value.password ? { secret: ctx.box.seal(value.password) } : {};
    return accountView(await ctx.store.update('account', row.id, d, { uniqueKey: accountKey(d.name), ...secret }, taken(d.name)));
  },

  async remove(ctx: Ctx, owner: string, caid: string, precondition?: string | string[]): Promise<void> {
    const row = await ownedRecord(ctx.store, 'account', owner, caid);
    ifMatch(precondition, accountView(row));
    await ctx.store.remove('account', row.id);
  },
};
