/**
 * The store of the model trained in this browser on fake-indexeddb: kept across a reopened connection (a
 * reload), replaced by a newer training, and cleared only when it is still the model the caller judged.
 */
import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it } from 'vitest';
import { closeLocalModelDb, type LocalModel, localModelStore } from './local-model';

const model = (id: string): LocalModel => ({
  id,
  trainedAt: '2026-01-01T00:00:00.000Z',
  labels: ['kiosk-grace'],
  lbphYaml: `yaml ${id}`,
  embeddingsJson: null,
  over: 'v1',
});

afterEach(async () => {
  await closeLocalModelDb();
  await new Promise<void>((resolve, reject) => {
    const req = indexedDB.deleteDatabase('lookout-local-model');
    req.onsuccess = () => resolve();
    req.onerror = () => reject(req.error);
  });
});

describe('localModelStore', () => {
  it('keeps the model across a reopened connection, the newest training replacing the last', async () => {
    expect(await localModelStore.get()).toBeNull();
    await localModelStore.put(model('local-1'));
    await localModelStore.put(model('local-2'));
    await closeLocalModelDb();
    expect(await localModelStore.get()).toEqual(model('local-2'));
  });

  it('clears only the model it was asked to (another tab may have trained a newer one)', async () => {
    await localModelStore.put(model('local-2'));
    await localModelStore.clear('local-1');
    expect((await localModelStore.get())?.id).toBe('local-2');
    await localModelStore.clear('local-2');
    expect(await localModelStore.get()).toBeNull();
  });
});
