/**
 * A face's queue of things to do at a wall time: the next one due by `now`, earliest first,
 * ties in the order queued, taken out of the queue (undefined: nothing is due yet).
 */
export function takeDue<T extends { at: number }>(queue: T[], now: number): T | undefined {
  let best = -1;
  for (let i = 0; i < queue.length; i++) {
    if (queue[i]!.at <= now && (best === -1 || queue[i]!.at < queue[best]!.at)) best = i;
  }
  return best === -1 ? undefined : queue.splice(best, 1)[0];
}
