// Readiness by probing, not by waiting: a host port on 127.0.0.1 forwarded to the guest's HTTP port,
// asked every quarter second until it answers 200. Loopback only.
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

const INTERVAL_MS = 250;
/**
 * Attempts overlap: one starts every INTERVAL_MS while earlier ones still wait. Until the guest has its
 * DHCP lease, QEMU's user-mode network gets no answer to the SYN it forwards and retransmits it seconds
 * later; an attempt given up after a short timeout hid the answer that came once the lease was there
 * (the 200 showed up to 2 s after the guest could give it).
 */
const REQUEST_TIMEOUT_MS = 10_000;
const MAX_IN_FLIGHT = REQUEST_TIMEOUT_MS / INTERVAL_MS;

/** A port on 127.0.0.1 free now (the kernel's choice); QEMU binds it a moment later. */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('no free port on 127.0.0.1'))));
    });
  });
}

export interface ProbeState {
  /** Last HTTP status the guest answered (none yet: undefined). */
  status?: number;
  /** When it first answered 200, in ms since `since`. */
  readyMs?: number;
}

/** Asks `http://127.0.0.1:port/path` until a 200 (resolves) or `signal` aborts (rejects with its reason). */
export async function probeHttp(port: number, urlPath: string, since: number, state: ProbeState, signal: AbortSignal): Promise<void> {
  const url = `http://127.0.0.1:${port}${urlPath}`;
  const done = new AbortController();
  const stop = AbortSignal.any([signal, done.signal]);
  let inFlight = 0;
  const attempt = async (): Promise<void> => {
    inFlight++;
    try {
      const res = await fetch(url, { signal: AbortSignal.any([stop, AbortSignal.timeout(REQUEST_TIMEOUT_MS)]), redirect: 'manual' });
      await res.body?.cancel();
      if (stop.aborted) return;
      state.status = res.status;
      if (res.status === 200) {
        state.readyMs = Math.round(performance.now() - since);
        done.abort();
      }
    } catch {
      // Not listening yet (connection reset by QEMU's forwarder while the guest has no server), or timed out.
    } finally {
      inFlight--;
    }
  };
  while (!stop.aborted) {
    if (inFlight < MAX_IN_FLIGHT) void attempt();
    await sleep(INTERVAL_MS, undefined, { signal: stop }).catch(() => undefined);
  }
  if (state.readyMs === undefined) throw signal.reason;
}
