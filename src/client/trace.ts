// A request trace for diagnostics (`APPLIANCE_FORGE_LOG=debug`): method, path, status and time of
// each exchange, wrapped around the transport so that retries show as the requests they are. The
// signature's query parameters (`apiKey`, `signature`) never appear; the key pair is the caller's secret.
import type { Exchange } from './wire';

export interface TraceEntry {
  readonly method: string;
  /** The service path and the query, without `apiKey` and `signature`. */
  readonly path: string;
  /** Absent when no answer came (the error's name is in `error`). */
  readonly status?: number;
  /** Until the response headers arrived. */
  readonly ms: number;
  readonly error?: string;
}

const HIDDEN = new Set(['apikey', 'signature']);

/** `users/a/x?apiKey=K&q=1&signature=S` → `users/a/x?q=1`. */
export function redactTarget(target: string): string {
  const i = target.indexOf('?');
  if (i < 0) return target;
  const kept = target.slice(i + 1).split('&').filter((p) => !HIDDEN.has(decodeURIComponent(p.split('=')[0] ?? '').toLowerCase()));
  return kept.length ? `${target.slice(0, i)}?${kept.join('&')}` : target.slice(0, i);
}

export function traced(next: Exchange, servicePath: string, onTrace: (t: TraceEntry) => void): Exchange {
  return async (req) => {
    const start = performance.now();
    const path = `${servicePath}/${redactTarget(req.target)}`;
    const ms = () => Math.round(performance.now() - start);
    try {
      const res = await next(req);
      onTrace({ method: req.method, path, status: res.status, ms: ms() });
      return res;
    } catch (e) {
      onTrace({ method: req.method, path, ms: ms(), error: e instanceof Error ? e.name : 'Error' });
      throw e;
    }
  };
}
