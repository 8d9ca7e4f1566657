// Appliance templates (spec "appliance"): the HTTP face of services/appliances.ts.
import type { Ctx } from '../context';
import { NO_CONTENT, type Routes } from '../http/handler';
import { page } from '../http/list';
import { appliances } from '../services/appliances';
import { whenReady } from './common';

export const applianceRoutes = (ctx: Ctx) =>
  ({
    appliance_getAll: async (req) => {
      const { total, items } = page('appliance', await appliances.list(ctx, req.params.uid), req.query);
      return req.ok({ total, appliances: items });
    },
    // A kept view answers in the same step (no promise): most signed GETs.
    appliance_get: (req) => whenReady(appliances.get(ctx, req.params.uid, req.params.aid), (v) => req.ok(v)),
    appliance_create: async (req) => req.created(await appliances.create(ctx, req.params.uid, req.body().value)),
    appliance_update: async (req) => req.ok(await appliances.update(ctx, req.params.uid, req.params.aid, () => req.body().value, req.raw.headers['if-match'])),
    appliance_delete: async (req) => {
      await appliances.remove(ctx, req.params.uid, req.params.aid, req.raw.headers['if-match']);
      return NO_CONTENT;
    },
  }) satisfies Partial<Routes>;
