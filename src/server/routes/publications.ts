// Publications to a cloud (wire contract §8–9): the HTTP face of services/publications.ts.
import type { Ctx } from '../context';
import { NO_CONTENT, type Routes } from '../http/handler';
import { publications } from '../services/publications';

export const publicationRoutes = (ctx: Ctx) =>
  ({
    applianceImage_publish: async (req) => req.created(await publications.publishImage(ctx, req.params.uid, req.params.aid, req.params.itid, () => req.body().value)),
    machineImage_publish: async (req) => req.created(await publications.publishByUri(ctx, req.params.uid, req.params.aid, req.body().value)),
    machineImagePublished_get: async (req) => req.ok(await publications.get(ctx, req.params.uid, req.params.aid, req.params.itid, req.params.pitid)),
    machineImagePublishedStatus_get: async (req) => req.ok(await publications.status(ctx, req.params.uid, req.params.aid, req.params.itid, req.params.pitid)),
    machineImagePublish_cancel: async (req) => req.ok(await publications.cancel(ctx, req.params.uid, req.params.aid, req.params.itid, req.params.pitid)),
    machineImagePublished_delete: async (req) => {
      await publications.remove(ctx, req.params.uid, req.params.aid, req.params.itid, req.params.pitid, req.raw.headers['if-match']);
      return NO_CONTENT;
    },
    machineImagePublished_getAll: async (req) => {
      const items = await publications.list(ctx, req.params.uid, req.params.aid);
      return req.ok({ total: items.length, publishImages: items });
    },
    machineImagePublished_deleteAll: async (req) => {
      await publications.removeAll(ctx, req.params.uid, req.params.aid);
      return NO_CONTENT;
    },
    userMachineImagePublished_getAll: async (req) => {
      const items = await publications.ofUser(ctx, req.params.uid);
      return req.ok({ total: items.length, publishImages: items });
    },
    userMachineImagePublishedStatus_getAll: async (req) => {
      const items = await publications.statusesOfUser(ctx, req.params.uid);
      return req.ok({ total: items.length, statuses: items });
    },
  }) satisfies Partial<Routes>;
