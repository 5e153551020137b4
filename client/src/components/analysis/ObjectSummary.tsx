/** Objects found, counted per class (most first) with each class's box colour, and the total; classes in words. */
import { For, Show } from 'solid-js';
import { objectDisplayName } from '../../../../shared/objects/classes';
import type { DetectedObject } from '../../../../shared/objects/types';
import { classColor } from '../../lib/overlay';

export interface ClassCount {
  classId: number;
  name: string;
  count: number;
}

export function countByClass(objects: readonly DetectedObject[]): ClassCount[] {
  const byName = new Map<string, ClassCount>();
  for (const o of objects) {
    const c = byName.get(o.class_name) ?? { classId: o.class_id, name: o.class_name, count: 0 };
    c.count++;
    byName.set(o.class_name, c);
  }
  return [...byName.values()].sort((a, b) => b.count - a.count || a.name.localeCompare(b.name));
}

/** `objects` is null before the first result. */
export function ObjectSummary(props: { objects: readonly DetectedObject[] | null }) {
  const counts = () => countByClass(props.objects ?? []);
  const total = () => props.objects?.length ?? 0;
  return (
    <section class="card object-summary" data-testid="object-summary" aria-labelledby="object-summary-title">
      <h2 id="object-summary-title">Objects found</h2>
      <Show when={props.objects} fallback={<p class="muted">Nothing analysed yet.</p>}>
        <Show when={total() > 0} fallback={<p data-testid="objects-empty">No objects found</p>}>
          <ul class="class-counts">
            <For each={counts()}>
              {(c) => (
                <li>
                  <span class="swatch" style={{ background: classColor(c.classId) }} aria-hidden="true" />
                  <span class="class-name" data-class={c.name}>
                    {objectDisplayName(c.name)}
                  </span>
                  <span class="class-count">{c.count}</span>
                </li>
              )}
            </For>
          </ul>
          <p class="object-total">
            Total: <strong>{total()}</strong> {total() === 1 ? 'object' : 'objects'}
          </p>
        </Show>
      </Show>
    </section>
  );
}
