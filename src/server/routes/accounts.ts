// Cloud accounts (wire contract §9): the password is write-only, stored sealed, and answers carry
// `secretsMissing=true` in its place.
import { isHttpUrl } from '../../model/field-rules';
import { OPENSTACK_ACCOUNT_FIELDS, openStackAccountFields, type CredAccount } from '../../model/resources';
import type { Ctx } from '../context';
import { NO_CONTENT, type Routes } from '../http/handler';
import { page } from '../http/list';
import { badRequest } from '../service-error';
import type { AccountDoc } from '../store/docs';
import { accountKey } from '../store/keys';
import { accountView } from '../views/account';
import { ifMatch, owned, requireText } from './common';

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
export function checkCloudEndpoints(ctx: Ctx, d: AccountDoc): void {
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

export const accountRoutes = (ctx: Ctx) =>
  ({
    cloudAccount_getAll: (req) => {
      const all = ctx.store.list('account', req.params.uid).map(accountView);
      const { total, items } = page('credAccount', all, req.query);
      return req.ok({ total, credAccounts: items });
    },

    cloudAccount_get: (req) => req.ok(accountView(owned(ctx, req, 'account', 'caid'))),

    cloudAccount_create: (req) => {
      const { value } = req.body();
      const d = accountFromBody(value);
      requireText(d.name, 'name');
      requireText(d.keystoneUrl, 'keystoneUrl');
      checkCloudEndpoints(ctx, d);
      const row = ctx.store.insert(
        'account',
        { owner: req.params.uid, uniqueKey: accountKey(d.name), doc: d, secret: value.password ? ctx.box.seal(value.password) : null },
        `an account named ${JSON.stringify(d.name)} already exists`,
      );
      return req.created(accountView(row));
    },

    cloudAccount_update: (req) => {
      const row = owned(ctx, req, 'account', 'caid');
      ifMatch(req, accountView(row));
      const { value } = req.body();
      const d = accountFromBody(value, row.doc);
      requireText(d.name, 'name');
      checkCloudEndpoints(ctx, d);
      const updated = ctx.store.update(
        'account',
        row.id,
        d,
        { uniqueKey: accountKey(d.name), ...(value.password ? { secret: ctx.box.seal(value.password) } : {}) },
        `an account named ${JSON.stringify(d.name)} already exists`,
      );
      return req.ok(accountView(updated));
    },

    cloudAccount_delete: (req) => {
      const row = owned(ctx, req, 'account', 'caid');
      ifMatch(req, accountView(row));
      ctx.store.remove('account', row.id);
      return NO_CONTENT;
    },
  }) satisfies Partial<Routes>;
