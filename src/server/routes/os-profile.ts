// The OS profile of a template (spec rules 2 and 3): the HTTP face of services/os-profile.ts.
import type { Ctx } from '../context';
import { NO_CONTENT, type Routes } from '../http/handler';
import { osProfiles } from '../services/os-profile';

export const osProfileRoutes = (ctx: Ctx) =>
  ({
    applianceOSProfile_create: async (req) => req.created(await osProfiles.create(ctx, req.params.uid, req.params.aid, () => req.body().value)),
    applianceOSProfile_get: async (req) => req.ok(await osProfiles.get(ctx, req.params.uid, req.params.aid, req.params.osid)),
    applianceOSProfile_delete: async (req) => {
      await osProfiles.remove(ctx, req.params.uid, req.params.aid, req.params.osid, req.raw.headers['if-match']);
      return NO_CONTENT;
    },
    applianceOSProfilePkg_getAll: async (req) => req.ok({ pkgs: await osProfiles.packages(ctx, req.params.uid, req.params.aid, req.params.osid) }),
    applianceOSProfilePkg_updateAll: async (req) => {
      const pkgs = await osProfiles.changePackages(ctx, req.params.uid, req.params.aid, req.params.osid, () => req.body().value, req.raw.headers['if-match']);
      return req.ok({ pkgs });
    },
  }) satisfies Partial<Routes>;
