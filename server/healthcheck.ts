/**
 * A container's HEALTHCHECK: `node dist/server/healthcheck.js <path> <port variable> <default port>` asks
 * `http://127.0.0.1:<port><path>` and exits 0 on a 2xx, 1 otherwise. Node is in every image already, so no
 * curl or wget has to be installed for this (and the base image can stay minimal).
 */
const [pathname = '/api/health', portVariable = 'PORT', defaultPort = '8080'] = process.argv.slice(2);
const port = process.env[portVariable] || defaultPort;

try {
  const res = await fetch(`http://127.0.0.1:${port}${pathname}`, { signal: AbortSignal.timeout(4000) });
  process.exitCode = res.ok ? 0 : 1;
  if (!res.ok) process.stderr.write(`${pathname}: HTTP ${res.status}\n`);
} catch (err) {
  process.stderr.write(`${pathname}: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
}
