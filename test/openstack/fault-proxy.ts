// FAULT PROXY — test-only. A tiny TCP proxy on 127.0.0.1 in front of the real Glance (or Keystone)
// that produces the faults the real services cannot: it drops a connection, stops reading, or flips
// a byte, once a client has sent a number of bytes on it. It also records the bytes it saw so a test can find
// the tokens that crossed the wire and check that no error message carries them.
import { connect, createServer, type Socket } from 'node:net';

export interface FaultProxyOptions {
  /** Destroy both sides once the client has sent more than this many bytes on one connection. */
  dropAfterBytes?: number;
  /** Stop reading from the client (never forward more) once it has sent this many bytes. */
  stallAfterBytes?: number;
  /** Flip the bits of the client's byte at this offset of a connection (data corrupted in flight). */
  corruptAtByte?: number;
  /** Keep up to this many bytes of each direction's start, for inspection. */
  recordBytes?: number;
}

export interface FaultProxy {
  url: string;
  /** What crossed the proxy (first bytes of each connection, both directions), as latin1 text. */
  recorded(): string;
  close(): Promise<void>;
}

export async function startFaultProxy(target: string, o: FaultProxyOptions = {}): Promise<FaultProxy> {
  const t = new URL(target);
  const sockets = new Set<Socket>();
  const record: Buffer[] = [];
  const keep = (b: Buffer, seen: number) => {
    const cap = o.recordBytes ?? 0;
    if (seen < cap) record.push(Buffer.from(b.subarray(0, cap - seen)));
  };
  const server = createServer((client) => {
    const upstream = connect(Number(t.port), t.hostname);
    sockets.add(client).add(upstream);
    let up = 0;
    let down = 0;
    client.on('data', (b) => {
      keep(b, up);
      up += b.length;
      if (o.dropAfterBytes !== undefined && up > o.dropAfterBytes) {
        client.destroy();
        upstream.destroy();
        return;
      }
      if (o.stallAfterBytes !== undefined && up > o.stallAfterBytes) {
        client.pause(); // never resumed: the client's writes back up until it gives up
        return;
      }
      const at = o.corruptAtByte === undefined ? -1 : o.corruptAtByte - (up - b.length);
      if (at >= 0 && at < b.length) b[at]! ^= 0xff;
      if (!upstream.write(b)) client.pause();
    });
    upstream.on('drain', () => {
      if (o.stallAfterBytes === undefined || up <= o.stallAfterBytes) client.resume();
    });
    upstream.on('data', (b) => {
      keep(b, down);
      down += b.length;
      client.write(b);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    recorded: () => Buffer.concat(record).toString('latin1'),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((res) => server.close(() => res()));
    },
  };
}
