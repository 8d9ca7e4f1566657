// Users (user_get, user_update) and their API key pairs (wire contract §4).
import { redact } from '../../model/redact';
import { hashPassword } from '../auth/passwords';
import { newApiKey } from '../auth/keys';
import type { Ctx } from '../context';
import { NO_CONTENT, type ReqBase, type Routes } from '../http/handler';
import { badRequest, forbidden } from '../service-error';
import { apiKeyView, userView } from '../views/user';
import { ifMatch, owned } from './common';

/** `POST …/apikeys?scope=read` makes a read-only pair; `read-write` (or nothing) the platform's default. */
function keyScope(q: string | undefined): 'read' | undefined {
  if (q === undefined || q === 'read-write') return undefined;
  if (q === 'read') return 'read';
  throw badRequest('scope must be read or read-write');
}

/**
 * A signed URL authorises any method and can be replayed (the platform's scheme signs the URL only):
 * what hands over an account — a new password, a new key pair — needs Basic, i.e. the current password.
 */
function needsPassword(req: ReqBase, what: string): void {
  if (req.caller.via !== 'basic') throw forbidden(`${what} needs Basic authentication (login and current password), not an API key signature`);
}

export const userRoutes = (ctx: Ctx) =>
  ({
    user_get: (req) => req.ok(userView(ctx.store.getUser(req.params.uid)!)),

    user_update: async (req) => {
      const { uid } = req.params;
      const cur = ctx.store.getUser(uid)!;
      ifMatch(req, userView(cur));
      const { value } = req.body();
      if (value.password !== undefined) needsPassword(req, 'changing a password');
      if (value.loginName !== undefined && value.loginName !== uid) throw badRequest('loginName cannot be changed');
      if (value.admin !== undefined && value.admin !== cur.admin && !req.caller.admin) throw forbidden('only an administrator may change admin');
      const passwordHash = value.password ? await hashPassword(value.password) : undefined;
      // Check and write in one synchronous step after the scrypt wait, from the record as it is now:
      // a concurrent writer with the same ETag must lose.
      const now = ctx.store.getUser(uid)!;
      ifMatch(req, userView(now));
      const d = { ...now.doc };
      for (const f of ['email', 'firstName', 'surname', 'name'] as const) if (value[f] !== undefined) d[f] = value[f];
      const u = ctx.store.updateUser(uid, { doc: d, admin: value.admin, passwordHash });
      return req.ok(redact('user', userView(u)));
    },

    apiKey_getAll: (req) => {
      const items = ctx.store.list('apikey', req.params.uid).map(apiKeyView);
      return req.ok({ total: items.length, apiKeyPairs: items });
    },

    apiKey_create: (req) => {
      needsPassword(req, 'creating an API key pair');
      const { value } = req.body();
      const scope = keyScope(req.query.scope);
      const k = newApiKey(ctx.store, ctx.box, req.params.uid, { name: value.name, description: value.description, scope });
      // The one answer that carries a secret key: its creation (README "API keys").
      return req.created({ ...apiKeyView(k.row), secretKey: k.secretKey });
    },

    apiKey_update: (req) => {
      const row = owned(ctx, req, 'apikey', 'akid');
      ifMatch(req, apiKeyView(row));
      const { value } = req.body();
      if (value.publicKey !== undefined && value.publicKey !== row.doc.publicKey) throw badRequest('publicKey cannot be changed');
      const d = { ...row.doc };
      if (value.name !== undefined) d.name = value.name;
      if (value.description !== undefined) d.description = value.description;
      return req.ok(apiKeyView(ctx.store.update('apikey', row.id, d)));
    },

    apiKey_delete: (req) => {
      const row = owned(ctx, req, 'apikey', 'akid');
      ifMatch(req, apiKeyView(row));
      ctx.store.remove('apikey', row.id);
      return NO_CONTENT;
    },
  }) satisfies Partial<Routes>;
