// Readiness by probing, not by waiting: a host port on 127.0.0.1 forwarded to the guest's HTTP port,
// asked every quarter second until it answers 200. Loopback only.
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

const INTERVAL_MS = 250;
const REQUEST_TIMEOUT_MS = 2_000;

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
  while (!signal.aborted) {
    try {
      const res = await fetch(url, { signal: AbortSignal.any([signal, AbortSignal.timeout(REQUEST_TIMEOUT_MS)]), redirect: 'manual' });
      await res.body?.cancel();
      state.status = res.status;
      if (res.status === 200) {
        state.readyMs = Math.round(performance.now() - since);
        return;
      }
    } catch {
      // Not listening yet (connection reset by QEMU's forwarder while the guest has no server).
    }
    await sleep(INTERVAL_MS, undefined, { signal }).catch(() => undefined);
  }
  throw signal.reason;
}
