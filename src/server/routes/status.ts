// GET /status: the one operation without authentication (wire contract §4, §6).
import type { Ctx } from '../context';
import { doc, type Routes } from '../http/handler';

export const statusRoutes = (ctx: Ctx) =>
  ({
    // Open to anyone: health and version only; the number of running jobs would tell others' activity (issue 12).
    uforgeStatus_get: () => doc('serviceStatus', { alive: true, version: ctx.version }),
  }) satisfies Routes;
