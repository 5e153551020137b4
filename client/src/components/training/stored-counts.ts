/**
 * "Adds to the N photos already stored for this person": N is what the server had before this page saved anything
 * for them. The server's count includes the photos saved from this page a moment ago; while they are still in the
 * page's list they are the photos being talked about, not earlier ones, so they are taken off.
 */
export interface StoredCapture {
  status: string;
  label?: string;
}

export function alreadyStored(
  server: readonly { label: string; images: number }[],
  captures: readonly StoredCapture[],
): Record<string, number> {
  const onPage = new Map<string, number>();
  for (const x of captures) if (x.status === 'stored' && x.label) onPage.set(x.label, (onPage.get(x.label) ?? 0) + 1);
  return Object.fromEntries(server.map((d) => [d.label, Math.max(0, d.images - (onPage.get(d.label) ?? 0))]));
}
