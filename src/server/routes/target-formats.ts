// Target formats (wire contract §8): the Imaging module's table, chosen by display name.
import type { Ctx } from '../context';
import type { Routes } from '../http/handler';
import { page } from '../http/list';
import { forbidden } from '../service-error';
import { targetFormatRecord } from '../views/target-format';

export const targetFormatRoutes = (ctx: Ctx) =>
  ({
    userTargetFormat_getAll: (req) => {
      const all = ctx.imaging.targetFormats.map((f) => targetFormatRecord(ctx, f));
      const { total, items } = page('targetFormat', all, req.query);
      return req.ok({ total, targetFormats: items });
    },
    userTargetFormat_update: () => {
      throw forbidden('target formats of the reference server are fixed');
    },
  }) satisfies Partial<Routes>;
