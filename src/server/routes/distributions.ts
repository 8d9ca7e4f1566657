// The catalog, read-only (docs/contracts.md "Catalog"): distributions, base profiles, packages.
import type { Ctx } from '../context';
import type { ReqWith, Routes } from '../http/handler';
import { boolParam, listParams, page } from '../http/list';
import { forbidden, notFound } from '../service-error';
import { distributionOf } from '../views/catalog';
import { idParam } from '../uris';

function distParam(ctx: Ctx, req: ReqWith<'id'>): number {
  const id = idParam(req.params.id);
  if (!distributionOf(ctx, id)) throw notFound(`no distribution ${req.params.id}`);
  return id;
}

const readOnly = (): never => {
  // Decision: the catalog comes from the package's data files; it is not edited through the API.
  throw forbidden('the catalog of the reference server is read-only');
};

export const distributionRoutes = (ctx: Ctx) =>
  ({
    os_getAll: (req) => {
      const { total, items } = page('distribution', ctx.catalog.distributions, req.query);
      return req.ok({ total, distributions: items });
    },
    os_get: (req) => req.ok(distributionOf(ctx, distParam(ctx, req))!),
    os_update: readOnly,

    osPkg_getAll: (req) => {
      const id = distParam(ctx, req);
      const latestOnly = req.query.latestOnly === undefined ? false : boolParam('latestOnly', req.query.latestOnly);
      const params = { ...listParams(req.query), latestOnly };
      const { items, version } = ctx.catalog.packageCursor(id, params);
      // Streamed (the whole Debian catalog is ~64k records): the ETag names the catalog and the search.
      return req.list({}, 'pkgs', items, `${version}\t${id}\t${JSON.stringify(params)}`);
    },
    osPkg_get: (req) => {
      const p = ctx.catalog.getPackage(distParam(ctx, req), idParam(req.params.pid));
      if (!p) throw notFound(`no package ${req.params.pid}`);
      return req.ok(p);
    },

    osTemplate_getAll: (req) => {
      const { total, items } = page('distribProfile', ctx.catalog.profiles(distParam(ctx, req)), req.query);
      return req.ok({ total, distribProfiles: items });
    },
    osTemplate_get: (req) => {
      const p = ctx.catalog.profiles(distParam(ctx, req)).find((x) => x.dbId === idParam(req.params.prid));
      if (!p) throw notFound(`no profile ${req.params.prid}`);
      return req.ok(p);
    },
    osTemplatePkgs_get: (req) => {
      const id = distParam(ctx, req);
      const prid = idParam(req.params.prid);
      if (!ctx.catalog.profiles(id).some((x) => x.dbId === prid)) throw notFound(`no profile ${req.params.prid}`);
      return req.ok({ pkgs: ctx.catalog.profilePackages(id, prid) });
    },
    osTemplate_create: readOnly,
    osTemplate_update: readOnly,
    osTemplate_delete: readOnly,
  }) satisfies Partial<Routes>;
