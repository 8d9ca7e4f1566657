// `GET <base>/health` (docs/server.md "Running a build farm"): whether this node's database and blob store
// answer now, for a load balancer or a service manager. No authentication, and nothing a caller could
// use: the backends' kinds and whether each answered, never where they are or what they hold. 200
// when both answered within the bound, 503 otherwise.
import type { FastifyInstance } from 'fastify';
import { messageOf } from '../../errors';
import type { Ctx } from '../context';

/** A backend slower than this counts as not answering. */
const BOUND_MS = 5000;

async function answers(check: () => Promise<void>): Promise<{ ok: boolean; ms: number; error?: string }> {
  const start = Date.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([check(), new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${BOUND_MS} ms`)), BOUND_MS)))]);
    return { ok: true, ms: Date.now() - start };
  } catch (e) {
    // The words of the failure, not its details: an error may name a host or a path.
    return { ok: false, ms: Date.now() - start, error: /no answer within/.test(messageOf(e)) ? messageOf(e) : 'no answer' };
  } finally {
    clearTimeout(timer);
  }
}

export function registerHealth(app: FastifyInstance, ctx: Ctx, role: string): void {
  app.get(`${ctx.servicePath}/health`, async (_request, reply) => {
    const [store, blobs] = await Promise.all([answers(() => ctx.store.ping()), answers(() => ctx.blobs.ping())]);
    const ok = store.ok && blobs.ok;
    return reply
      .code(ok ? 200 : 503)
      .header('Cache-Control', 'no-store')
      .type('application/json; charset=utf-8')
      .send(JSON.stringify({ status: ok ? 'ok' : 'unavailable', role, version: ctx.version, store: { backend: ctx.store.backend, ...store }, blobs: { backend: ctx.blobs.backend, ...blobs }, queue: { backend: ctx.queue.backend } }));
  });
}
