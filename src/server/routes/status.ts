// GET /status: the one operation without authentication (wire contract §4, §6).
import type { Ctx } from '../context';
import type { Routes } from '../http/handler';

export const statusRoutes = (ctx: Ctx) =>
  ({
    // Open to anyone: health and version only; the number of running jobs would tell others' activity.
    uforgeStatus_get: (req) => req.ok({ alive: true, version: ctx.version }),
  }) satisfies Partial<Routes>;
