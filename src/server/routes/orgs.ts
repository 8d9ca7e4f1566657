// One default organization, `orgs/1`, to which every user belongs (wire contract §10, Decision).
import type { Ctx } from '../context';
import type { Routes } from '../http/handler';
import { forbidden, notFound } from '../service-error';
import { defaultOrg, DEFAULT_ORG_ID } from '../views/org';

export const orgRoutes = (ctx: Ctx) =>
  ({
    org_getAll: (req) => req.ok({ total: 1, orgs: [defaultOrg(ctx)] }),
    org_get: (req) => {
      if (req.params.oid !== String(DEFAULT_ORG_ID)) throw notFound(`no org ${req.params.oid}`);
      return req.ok(defaultOrg(ctx));
    },
    // Decision: the reference server has a single organization; creating others is not offered.
    org_create: () => {
      throw forbidden('the reference server has one organization (orgs/1); creating others is not supported');
    },
  }) satisfies Partial<Routes>;
