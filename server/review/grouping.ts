/**
 * Groups the unknown faces the service saw by likeness, so a reviewer sees "one stranger, seen 10 times" instead of
 * ten rows. Greedy and incremental: each face not yet in a group joins the group whose mean descriptor is nearest,
 * when that is within the embedding rule's limit (`max` of the descriptor in use, the distance at which the
 * recognizer would name someone); otherwise it starts a group of its own. A face without a descriptor (the
 * embedding worker off, or not yet computed) is a group of its own.
 *
 * Group ids are stable: a face keeps the group it was put in (the caller stores it, sightings.group_id), and a new
 * group is named after its first face, so the same group has the same id on every replica and after a restart.
 * Descriptors of another length (another descriptor model) are never compared.
 */

export interface GroupingItem {
  id: string;
  /** The time seen (ms since the epoch): faces are placed oldest first, so the first face names its group. */
  seenAt: number;
  descriptor: Float32Array | null;
  /** The group the face is in already (kept), or null for a face to place. */
  groupId: string | null;
}

export interface GroupingOptions {
  /** The largest euclidean distance from a group's mean descriptor at which a face joins it. */
  max: number;
}

/** The id a new group gets from its first face. */
export function groupIdFor(firstSightingId: string): string {
  return `g-${firstSightingId}`;
}

function distance(a: Float32Array, b: Float64Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) {
    const d = a[i] - b[i];
    sum += d * d;
  }
  return Math.sqrt(sum);
}

interface Cluster {
  id: string;
  sum: Float64Array;
  mean: Float64Array;
  count: number;
}

function addTo(cluster: Cluster, descriptor: Float32Array): void {
  cluster.count++;
  for (let i = 0; i < descriptor.length; i++) {
    cluster.sum[i] += descriptor[i];
    cluster.mean[i] = cluster.sum[i] / cluster.count;
  }
}

/**
 * The group of every face that had none: a map from face id to its new group id (faces already in a group are not
 * in it). Existing groups are built first from their faces with descriptors, so new faces join them.
 */
export function placeInGroups(items: readonly GroupingItem[], options: GroupingOptions): Map<string, string> {
  const clusters = new Map<string, Cluster>();
  const byLength = new Map<number, Cluster[]>();
  const clusterOf = (id: string, length: number): Cluster => {
    let cluster = clusters.get(`${length}:${id}`);
    if (!cluster) {
      cluster = { id, sum: new Float64Array(length), mean: new Float64Array(length), count: 0 };
      clusters.set(`${length}:${id}`, cluster);
      const list = byLength.get(length) ?? [];
      list.push(cluster);
      byLength.set(length, list);
    }
    return cluster;
  };

  for (const item of items) {
    if (item.groupId !== null && item.descriptor) addTo(clusterOf(item.groupId, item.descriptor.length), item.descriptor);
  }

  const placed = new Map<string, string>();
  const toPlace = items.filter((i) => i.groupId === null).sort((a, b) => a.seenAt - b.seenAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  for (const item of toPlace) {
    if (!item.descriptor) {
      const id = groupIdFor(item.id);
      placed.set(item.id, id);
      continue;
    }
    let best: Cluster | null = null;
    let bestDistance = Number.POSITIVE_INFINITY;
    for (const cluster of byLength.get(item.descriptor.length) ?? []) {
      const d = distance(item.descriptor, cluster.mean);
      if (d < bestDistance) {
        best = cluster;
        bestDistance = d;
      }
    }
    if (!best || bestDistance > options.max) {
      const id = groupIdFor(item.id);
      best = clusterOf(id, item.descriptor.length);
    }
    addTo(best, item.descriptor);
    placed.set(item.id, best.id);
  }
  return placed;
}
