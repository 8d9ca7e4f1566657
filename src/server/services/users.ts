// Users (user_get, user_update) and their API key pairs (wire contract §4).
import type { ApiKeyPair, User } from '../../model/resources';
import { hashPassword } from '../auth/passwords';
import { newApiKey } from '../auth/keys';
import type { Caller } from '../auth/authenticate';
import type { Ctx } from '../context';
import { badRequest, forbidden, notFound } from '../service-error';
import type { ApiKeyDoc } from '../store/docs';
import { apiKeyView, userView } from '../views/user';
import type { Located } from '../views/stamp';
import { ifMatch, ownedRecord } from './records';

/**
 * A signed URL authorises any method and can be replayed (the platform's scheme signs the URL only):
 * what hands over an account — a new password, a new key pair — needs Basic, i.e. the current password.
 */
function needsPassword(caller: Caller, what: string): void {
  if (caller.via !== 'basic') throw forbidden(`${what} needs Basic authentication (login and current password), not an API key signature`);
}

/** `POST …/apikeys?scope=read` makes a read-only pair; `read-write` (or nothing) the platform's default. */
function keyScope(q: string | undefined): ApiKeyDoc['scope'] {
  if (q === undefined || q === 'read-write') return undefined;
  if (q === 'read') return 'read';
  throw badRequest('scope must be read or read-write');
}

export const users = {
  async get(ctx: Ctx, login: string): Promise<Located<User>> {
    const u = await ctx.store.getUser(login);
    if (!u) throw notFound(`no user ${login}`);
    return userView(u);
  },

  async update(ctx: Ctx, caller: Caller, login: string, body: () => User, precondition?: string | string[]): Promise<Located<User>> {
    const cur = await ctx.store.getUser(login);
    if (!cur) throw notFound(`no user ${login}`);
    ifMatch(precondition, userView(cur));
    const value = body();
    if (value.password !== undefined) needsPassword(caller, 'changing a password');
    if (value.loginName !== undefined && value.loginName !== login) throw badRequest('loginName cannot be changed');
    if (value.admin !== undefined && value.admin !== cur.admin && !caller.admin) throw forbidden('only an administrator may change admin');
    const passwordHash = value.password ? await hashPassword(value.password) : undefined;
    // Checked again and written in one transaction after the scrypt wait, from the record as it is now:
    // a concurrent writer with the same ETag must lose.
    return ctx.store.tx(async (t) => {
      const now = await t.getUser(login);
      if (!now) throw notFound(`no user ${login}`);
      ifMatch(precondition, userView(now));
      const d = { ...now.doc };
      for (const f of ['email', 'firstName', 'surname', 'name'] as const) if (value[f] !== undefined) d[f] = value[f];
      return userView(await t.updateUser(login, { doc: d, admin: value.admin, passwordHash }));
    });
  },

  async keys(ctx: Ctx, login: string): Promise<Array<Located<ApiKeyPair>>> {
    return (await ctx.store.list('apikey', login)).map(apiKeyView);
  },

  /** The new pair with its secret key: the one answer that carries one (docs/cli-guide.md "Server and key management"). */
  async createKey(ctx: Ctx, caller: Caller, login: string, body: () => ApiKeyPair, scopeParam: string | undefined): Promise<Located<ApiKeyPair> & { secretKey: string }> {
    needsPassword(caller, 'creating an API key pair');
    const value = body();
    const scope = keyScope(scopeParam);
    const k = await newApiKey(ctx.store, ctx.box, login, { name: value.name, description: value.description, scope });
    return { ...apiKeyView(k.row), secretKey: k.secretKey };
  },

  async updateKey(ctx: Ctx, login: string, akid: string, body: () => ApiKeyPair, precondition?: string | string[]): Promise<Located<ApiKeyPair>> {
    const row = await ownedRecord(ctx.store, 'apikey', login, akid);
    ifMatch(precondition, apiKeyView(row));
    const value = body();
    if (value.publicKey !== undefined && value.publicKey !== row.doc.publicKey) throw badRequest('publicKey cannot be changed');
    const d = { ...row.doc };
    if (value.name !== undefined) d.name = value.name;
    if (value.description !== undefined) d.description = value.description;
    return apiKeyView(await ctx.store.update('apikey', row.id, d));
  },

  async removeKey(ctx: Ctx, login: string, akid: string, precondition?: string | string[]): Promise<void> {
    const row = await ownedRecord(ctx.store, 'apikey', login, akid);
    ifMatch(precondition, apiKeyView(row));
    await ctx.store.remove('apikey', row.id);
  },
};
