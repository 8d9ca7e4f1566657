// Machine images (wire contract §8): the HTTP face of services/images.ts.
import type { Ctx } from '../context';
import { NO_CONTENT, type Routes } from '../http/handler';
import { page } from '../http/list';
import { images } from '../services/images';

export const imageRoutes = (ctx: Ctx) =>
  ({
    machineImage_getAll: async (req) => {
      const { total, items } = page('image', await images.list(ctx, req.params.uid, req.params.aid), req.query);
      return req.ok({ total, images: items });
    },
    machineImage_get: async (req) => req.ok(await images.get(ctx, req.params.uid, req.params.aid, req.params.itid)),
    machineImage_generate: async (req) => req.created(await images.generate(ctx, req.params.uid, req.params.aid, () => req.body().value)),
    machineImage_regenerate: async (req) => req.ok(await images.regenerate(ctx, req.params.uid, req.params.aid, req.params.itid)),
    machineImage_delete: async (req) => {
      await images.remove(ctx, req.params.uid, req.params.aid, req.params.itid, req.raw.headers['if-match']);
      return NO_CONTENT;
    },
    machineImage_deleteAll: async (req) => {
      await images.removeAll(ctx, req.params.uid, req.params.aid);
      return NO_CONTENT;
    },
    machineImageStatus_get: async (req) => req.ok(await images.status(ctx, req.params.uid, req.params.aid, req.params.itid)),
    machineImageStatus_getAll: async (req) => {
      const items = await images.statuses(ctx, req.params.uid, req.params.aid);
      return req.ok({ total: items.length, statuses: items });
    },
    machineImageGeneration_cancel: async (req) => req.ok(await images.cancel(ctx, req.params.uid, req.params.aid, req.params.itid)),
    machineImage_download: (req) => images.download(ctx, req.params.uid, req.params.aid, req.params.itid),
    machineImage_downloadFile: (req) => images.download(ctx, req.params.uid, req.params.aid, req.params.itid, req.params.fileName),
    machineImageSbom_download: (req) => images.sbom(ctx, req.params.uid, req.params.aid, req.params.itid, req.params.format),
    userMachineImage_getAll: async (req) => {
      const items = await images.ofUser(ctx, req.params.uid);
      return req.ok({ total: items.length, images: items });
    },
    userMachineImageStatus_get: async (req) => {
      const items = await images.statusesOfUser(ctx, req.params.uid);
      return req.ok({ total: items.length, statuses: items });
    },
  }) satisfies Partial<Routes>;
