// The catalog's records as other views name them (docs/contracts.md "Catalog").
import type { Distribution } from '../../model/resources';
import type { Ctx } from '../context';

export function distributionOf(ctx: Ctx, id: number): Distribution | undefined {
  return ctx.catalog.distributions.find((d) => d.dbId === id);
}

/** `Debian 12`: how a template, a profile or an image names its distribution. */
export function distributionName(d: Distribution): string {
  return `${d.name ?? ''} ${d.version ?? ''}`.trim();
}
