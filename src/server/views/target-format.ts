// Target formats as answered and as requests name them (wire contract §8): the Imaging module's table,
// numbered in its order, chosen by display name.
import type { TargetFormat } from '../../model/resources';
import type { Ctx } from '../context';
import type { TargetFormatSpec } from '../ports';
import { badRequest } from '../service-error';

export function targetFormatRecord(ctx: Ctx, f: TargetFormatSpec): TargetFormat {
  const i = ctx.imaging.targetFormats.indexOf(f);
  return {
    dbId: i + 1,
    name: f.name,
    type: f.type,
    credAccountType: f.credAccountType || undefined,
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
