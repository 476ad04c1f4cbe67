/**
 * The session object's one alarm (the runtime gives an object one), shared by what must wake
 * it though nothing else does: a closing record's copy to retry, the duration cap of a session
 * no client holds open. Each asks for its time; the alarm is set to the earliest. When it
 * fires, each looks again and asks anew (an object that restarted asks at its start).
 */
export type AlarmPurpose = "closing" | "limit" | "call";

export class SessionAlarm {
  private readonly wanted = new Map<AlarmPurpose, number>();

  constructor(private readonly storage: DurableObjectStorage) {}

  set(purpose: AlarmPurpose, at: number): void {
    this.wanted.set(purpose, at);
    this.apply();
  }

  clear(purpose: AlarmPurpose): void {
    if (!this.wanted.delete(purpose)) return;
    this.apply();
  }

  /** The alarm fired: every purpose is looked at again by its owner, who asks anew. */
  fired(): void {
    this.wanted.clear();
  }

  private apply(): void {
    const next = Math.min(...this.wanted.values());
    if (Number.isFinite(next)) void this.storage.setAlarm(next);
    else void this.storage.deleteAlarm();
  }
}
