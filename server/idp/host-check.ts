/**
 * DNS rebinding, as the API refuses it (docs/api.md, "Security"): a request must be addressed to one of the allowed
 * host names (ALLOWED_HOSTS, the listen address, and the issuer's own host), or to an IP address (probes by pod
 * IP). Otherwise a page of another site, whose name was rebound to this machine, could drive the sign-in pages
 * (guess passwords, lock users out) from a victim's browser.
 */
import type { IncomingMessage } from 'node:http';
import { allowedHostsFor } from '../http/security.js';

const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;
/** What a Host header may hold: a name or address and a port. */
const HOST_HEADER = /^[A-Za-z0-9.\-_[\]:]+$/;

export function hostChecker(list: readonly string[] | undefined, listenHost: string, issuer: string): (req: IncomingMessage) => boolean {
  const hosts = new Set([...allowedHostsFor(list, listenHost), new URL(issuer).hostname.toLowerCase()]);
  const domains = [...hosts].filter((h) => h.startsWith('*.')).map((h) => h.slice(1));
  return (req) => {
    const raw = req.headers.host;
    if (raw === undefined) return true; // HTTP/1.0 without Host: no browser sends that
    if (!HOST_HEADER.test(raw)) return false;
    let name: string;
    try {
      name = new URL(`http://${raw}`).hostname.toLowerCase().replace(/\.$/, '');
    } catch {
      return false;
    }
    return IPV4.test(name) || name.startsWith('[') || hosts.has(name) || domains.some((d) => name.endsWith(d));
  };
}
