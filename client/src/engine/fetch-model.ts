/**
 * One model file from the app's server (cascades, face-api and NanoDet weights), for every engine in the worker:
 * an error that says what could not be had and why, whether the server is gone or answered an error.
 */
export async function fetchModelFile(url: string, what?: string): Promise<Response> {
  const name = what ? `the ${what} ${url}` : url;
  const res = await fetch(url).catch(() => null);
  if (!res) throw new Error(`cannot fetch ${name} (the server is unreachable)`);
  if (!res.ok) throw new Error(`cannot fetch ${name} (${res.status} ${res.statusText})`);
  return res;
}
