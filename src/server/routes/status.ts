// GET /status: the one operation without authentication (wire contract §4, §6).
import type { Ctx } from '../context';
import { doc, type Routes } from '../http/handler';

export const statusRoutes = (ctx: Ctx) =>
  ({
    uforgeStatus_get: () => doc('serviceStatus', { alive: true, version: ctx.version, serviceLoad: ctx.jobs.size }),
  }) satisfies Routes;
