// Target formats (wire contract §8): the Imaging module's table, chosen by display name.
import type { TargetFormat } from '../../model/resources';
import type { Ctx } from '../context';
import type { Routes } from '../http/handler';
import { page } from '../http/list';
import type { TargetFormatSpec } from '../ports';
import { badRequest, forbidden } from '../service-error';

export function targetFormatRecord(ctx: Ctx, f: TargetFormatSpec): TargetFormat {
  const i = ctx.imaging.targetFormats.indexOf(f);
  return {
    dbId: i + 1,
    name: f.name,
    type: f.type,
    ...(f.credAccountType ? { credAccountType: f.credAccountType } : {}),
    access: true,
    active: true,
  };
}

/** The format named `name` (case-insensitive), or 400. */
export function targetFormatByName(ctx: Ctx, name: string | undefined): TargetFormatSpec {
  const f = name === undefined ? undefined : ctx.imaging.targetFormats.find((x) => x.name.toLowerCase() === name.trim().toLowerCase());
  if (!f) throw badRequest(`unknown targetFormat.name ${JSON.stringify(name ?? '')}; one of: ${ctx.imaging.targetFormats.map((x) => x.name).join(', ')}`);
  return f;
}

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
