// Users (user_get, user_update) and their API key pairs (wire contract §4): the HTTP face of services/users.ts.
import { redact } from '../../model/redact';
import type { Ctx } from '../context';
import { NO_CONTENT, type Routes } from '../http/handler';
import { users } from '../services/users';

export const userRoutes = (ctx: Ctx) =>
  ({
    user_get: async (req) => req.ok(await users.get(ctx, req.params.uid)),
    user_update: async (req) => req.ok(redact('user', await users.update(ctx, req.caller, req.params.uid, () => req.body().value, req.raw.headers['if-match']))),
    apiKey_getAll: async (req) => {
      const items = await users.keys(ctx, req.params.uid);
      return req.ok({ total: items.length, apiKeyPairs: items });
    },
    apiKey_create: async (req) => req.created(await users.createKey(ctx, req.caller, req.params.uid, () => req.body().value, req.query.scope)),
    apiKey_update: async (req) => req.ok(await users.updateKey(ctx, req.params.uid, req.params.akid, () => req.body().value, req.raw.headers['if-match'])),
    apiKey_delete: async (req) => {
      await users.removeKey(ctx, req.params.uid, req.params.akid, req.raw.headers['if-match']);
      return NO_CONTENT;
    },
  }) satisfies Partial<Routes>;
