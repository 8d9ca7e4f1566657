// Cloud accounts (wire contract §9): the HTTP face of services/accounts.ts.
import type { Ctx } from '../context';
import { NO_CONTENT, type Routes } from '../http/handler';
import { page } from '../http/list';
import { accounts } from '../services/accounts';

export const accountRoutes = (ctx: Ctx) =>
  ({
    cloudAccount_getAll: async (req) => {
      const { total, items } = page('credAccount', await accounts.list(ctx, req.params.uid), req.query);
      return req.ok({ total, credAccounts: items });
    },
    cloudAccount_get: async (req) => req.ok(await accounts.get(ctx, req.params.uid, req.params.caid)),
    cloudAccount_create: async (req) => req.created(await accounts.create(ctx, req.params.uid, req.body().value)),
    cloudAccount_update: async (req) => req.ok(await accounts.update(ctx, req.params.uid, req.params.caid, () => req.body().value, req.raw.headers['if-match'])),
    cloudAccount_delete: async (req) => {
      await accounts.remove(ctx, req.params.uid, req.params.caid, req.raw.headers['if-match']);
      return NO_CONTENT;
    },
  }) satisfies Partial<Routes>;
