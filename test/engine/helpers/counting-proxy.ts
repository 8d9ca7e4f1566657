// A counting loopback proxy, labelled as such: it sits in front of the real reference server and
// counts requests by method, so a test can prove that a converged apply makes zero POSTs.
// It forwards every request and response unchanged.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CountingProxy {
  /** The server's base URL, through the proxy (same service path). */
  readonly url: string;
  readonly counts: Record<string, number>;
  /** `METHOD path` of every request, in order. */
  readonly log: string[];
  reset(): void;
  close(): Promise<void>;
}

export async function startCountingProxy(target: string): Promise<CountingProxy> {
  const t = new URL(target);
  const counts: Record<string, number> = {};
  const log: string[] = [];
  const server = http.createServer((req, res) => {
    counts[req.method!] = (counts[req.method!] ?? 0) + 1;
    log.push(`${req.method} ${req.url!.split('?')[0]}`);
    const up = http.request(
      { host: t.hostname, port: t.port, method: req.method, path: req.url, headers: { ...req.headers, host: t.host } },
      (r) => {
        res.writeHead(r.statusCode!, r.headers);
        r.pipe(res);
      },
    );
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}${t.pathname}`,
    counts,
    log,
    reset() {
      for (const k of Object.keys(counts)) delete counts[k];
      log.length = 0;
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
