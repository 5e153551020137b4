/**
 * Ids made on the device for the server's dedup: a random UUID (v4). crypto.randomUUID exists only in secure
 * contexts (https, localhost); a kiosk opened at http://<LAN address> has getRandomValues alone, so build it.
 */
export function randomUuid(): string {
  if (typeof crypto.randomUUID === 'function' && globalThis.isSecureContext) return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40; // version 4
  b[8] = (b[8] & 0x3f) | 0x80; // RFC 4122 variant
  const h = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** A `capture_id` for POST /api/images: 32 hex digits (the contract allows 8 to 64 of [A-Za-z0-9_-]). */
export function newCaptureId(): string {
  return randomUuid().replace(/-/g, '');
}
