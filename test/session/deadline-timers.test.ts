import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { DeadlineTimers } from "../../src/session/deadline-timers.js";

describe("DeadlineTimers: the session's timers on one runtime timer", () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(0);
  });
  afterEach(() => vi.useRealTimers());

  const make = () =>
    new DeadlineTimers(
      () => Date.now(),
      () => 0.5,
    );

  it("fires each timer at its deadline, in deadline order, once", () => {
    const t = make();
    const fired: string[] = [];
    t.set("watchdog", 300, 0, () => fired.push("watchdog"));
    t.set("idle", 100, 0, () => fired.push("idle"));
    t.set("grace:a", 200, 0, () => fired.push("grace"));
    vi.advanceTimersByTime(99);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual(["idle"]);
    vi.advanceTimersByTime(1000);
    expect(fired).toEqual(["idle", "grace", "watchdog"]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("a cleared timer never fires; setting a timer again replaces it", () => {
    const t = make();
    const fired: string[] = [];
    t.set("watchdog", 100, 0, () => fired.push("first"));
    t.set("idle", 500, 0, () => fired.push("idle"));
    t.clear("watchdog");
    t.set("reconnect", 50, 0, () => fired.push("reconnect"));
    t.set("reconnect", 150, 0, () => fired.push("reconnect again"));
    vi.advanceTimersByTime(1000);
    expect(fired).toEqual(["reconnect again", "idle"]);
  });

  it("a turn's set and clear take no runtime timer while an earlier wake is waiting", () => {
    const t = make();
    const set = vi.spyOn(globalThis, "setTimeout");
    t.set("idle", 60_000, 0, () => {});
    t.set("watchdog", 15_000, 0, () => {});
    const armed = set.mock.calls.length;
    // A hundred turns within the first watchdog's 15 s: each sets and clears its watchdog.
    for (let i = 0; i < 100; i++) {
      vi.advanceTimersByTime(10);
      t.clear("watchdog");
      t.set("watchdog", Date.now() + 15_000, 0, () => {});
    }
    expect(set.mock.calls.length).toBe(armed);
    set.mockRestore();
  });

  it("with no deadline left, no runtime timer is pending (the object may hibernate)", () => {
    const t = make();
    t.set("idle", 60_000, 0, () => {});
    t.set("watchdog", 15_000, 0, () => {});
    t.clear("watchdog");
    expect(vi.getTimerCount()).toBe(1);
    t.clear("idle");
    expect(vi.getTimerCount()).toBe(0);
    t.set("idle", 60_000, 0, () => {});
    t.clearAll();
    expect(vi.getTimerCount()).toBe(0);
  });

  it("a stale wake with nothing due waits again for the next deadline", () => {
    const t = make();
    const fired: number[] = [];
    t.set("watchdog", 100, 0, () => {});
    t.set("idle", 1_000, 0, () => fired.push(Date.now()));
    t.clear("watchdog"); // the runtime timer still wakes at 100, finds nothing due
    vi.advanceTimersByTime(100);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(900);
    expect(fired).toEqual([1_000]);
  });

  it("a timer set from a firing callback is kept, and jitter delays within its bound", () => {
    const t = make();
    const fired: string[] = [];
    t.set("reconnect", 100, 0, () => {
      fired.push("first");
      t.set("reconnect", 200, 100, () => fired.push(`second at ${Date.now()}`));
    });
    vi.advanceTimersByTime(1000);
    // random() is 0.5: 200 + 0.5 × 100.
    expect(fired).toEqual(["first", "second at 250"]);
  });
});
