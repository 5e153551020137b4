/**
 * Serves a fetch handler on host:port (port 0 picks a free one) and closes it without waiting for keep-alive
 * sockets: the model server and the PPE detector are started this way by their entry points, tests and benches.
 */
import { serve, type ServerType } from '@hono/node-server';

export interface Listening {
  /** `http://host:port` (IPv6 hosts bracketed). */
  url: string;
  port: number;
  close(): Promise<void>;
}

export async function listen(fetch: (request: Request) => Response | Promise<Response>, host: string, port: number): Promise<Listening> {
  let http: ServerType | undefined;
  const bound = await new Promise<number>((resolve, reject) => {
    http = serve({ fetch, port, hostname: host }, (info) => resolve(info.port));
    http.once('error', reject);
  });
  const urlHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${urlHost}:${bound}`,
    port: bound,
    close: () =>
      new Promise<void>((resolve) => {
        if (!http) return resolve();
        http.close(() => resolve());
        // Keep-alive sockets would hold close() open.
        (http as { closeAllConnections?: () => void }).closeAllConnections?.();
      }),
  };
}
