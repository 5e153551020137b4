/**
 * Start and stop of the test doubles' node:http servers: listen on 127.0.0.1 (port 0: a free one), and close
 * without waiting for keep-alive sockets, cancelling the double's pending delayed answers.
 */
import type http from 'node:http';
import type { AddressInfo } from 'node:net';

export function listenLocal(server: http.Server, port: number): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

export function closeNow(server: http.Server, timers: Set<NodeJS.Timeout>): Promise<void> {
  return new Promise<void>((resolve) => {
    for (const t of timers) clearTimeout(t);
    timers.clear();
    if (!server.listening) return resolve();
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
