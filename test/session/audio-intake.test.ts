/**
 * Clients' audio on its way in when the object falls behind (session/audio-intake.ts,
 * session/load-probe.ts): the load probe's timer lateness says "behind"; then a socket's
 * chunks wait for the loop's turn to end and only its newest BUDGET_MS go on, the oldest shed,
 * the client told at most once a second; every other frame of the socket keeps its place.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { AudioIntake, newestWithin } from "../../src/session/audio-intake.js";
import type { ClientInput } from "../../src/session/client-frames.js";
import { LoadProbe } from "../../src/session/load-probe.js";

type ClientAudio = Extract<ClientInput, { type: "client_audio" }>;

/** A 20 ms chunk of PCM16 at 16 kHz (640 bytes) whose first byte is its number. */
const chunk = (n: number, clientId = "phone"): ClientAudio => {
  const pcm = new Uint8Array(640);
  pcm[0] = n;
  return { type: "client_audio", clientId, pcm };
};
const numbers = (chunks: readonly ClientAudio[]) => chunks.map((c) => c.pcm[0]);

describe("newestWithin: what goes on of a queue, the oldest shed", () => {
  const ms = (n: number) => n;
  it("keeps the newest whose lengths add up to the budget, in order; sheds the ones before", () => {
    expect(newestWithin([20, 20, 20, 20, 20], 60, ms)).toEqual({
      kept: [20, 20, 20],
      shed: [20, 20],
    });
    expect(newestWithin([1, 2, 3, 4], 7, ms)).toEqual({ kept: [3, 4], shed: [1, 2] });
  });

  it("keeps everything within the budget, and always the newest chunk, however long", () => {
    expect(newestWithin([20, 20], 200, ms)).toEqual({ kept: [20, 20], shed: [] });
    expect(newestWithin([20, 500], 200, ms)).toEqual({ kept: [500], shed: [20] });
    expect(newestWithin([], 200, ms)).toEqual({ kept: [], shed: [] });
  });
});

describe("the audio intake", () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(10_000);
  });
  afterEach(() => vi.useRealTimers());

  const ws = (name: string) => ({ name }) as unknown as WebSocket;

  function make(behind: boolean) {
    const delivered: ClientAudio[] = [];
    const said: { clientId: string; chunks: number; ms: number }[] = [];
    const probe = { behind, noteAudio: () => undefined } as unknown as LoadProbe;
    const intake = new AudioIntake(
      {
        deliver: (input) => delivered.push(input),
        shed: (clientId, chunks, ms) => said.push({ clientId, chunks, ms }),
        msOf: (pcm) => pcm.length / 32,
      },
      probe,
    );
    return { intake, delivered, said, probe };
  }

  it("on time, each chunk goes on at once; nothing is queued or shed", () => {
    const { intake, delivered, said } = make(false);
    const phone = ws("phone");
    for (let n = 1; n <= 30; n++) intake.audio(phone, chunk(n));
    expect(numbers(delivered)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    expect(vi.getTimerCount()).toBe(0);
    expect(said).toEqual([]);
    expect(intake.shedTotal).toEqual({ chunks: 0, ms: 0 });
  });

  it("behind, a burst waits for the loop's turn; its newest 200 ms go on, the oldest are shed and said", () => {
    const { intake, delivered, said } = make(true);
    const phone = ws("phone");
    for (let n = 1; n <= 30; n++) intake.audio(phone, chunk(n));
    expect(delivered).toEqual([]);
    vi.advanceTimersByTime(0);
    expect(numbers(delivered)).toEqual(Array.from({ length: 10 }, (_, i) => i + 21));
    expect(said).toEqual([{ clientId: "phone", chunks: 20, ms: 400 }]);
    expect(intake.shedTotal).toEqual({ chunks: 20, ms: 400 });
  });

  it("each socket's budget is its own: one session's burst sheds none of another's audio", () => {
    const { intake, delivered, said } = make(true);
    const [a, b] = [ws("a"), ws("b")];
    for (let n = 1; n <= 15; n++) intake.audio(a, chunk(n, "a"));
    for (let n = 1; n <= 3; n++) intake.audio(b, chunk(100 + n, "b"));
    vi.advanceTimersByTime(0);
    expect(numbers(delivered.filter((c) => c.clientId === "b"))).toEqual([101, 102, 103]);
    expect(numbers(delivered.filter((c) => c.clientId === "a"))).toEqual([
      6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
    ]);
    expect(said).toEqual([{ clientId: "a", chunks: 5, ms: 100 }]);
  });

  it("a client is told at most once a second; what was shed meanwhile is said when the second is up", () => {
    const { intake, said } = make(true);
    const phone = ws("phone");
    const burst = (from: number) => {
      for (let n = from; n < from + 12; n++) intake.audio(phone, chunk(n % 256));
      vi.advanceTimersByTime(0);
    };
    burst(0);
    vi.advanceTimersByTime(400);
    burst(20);
    vi.advanceTimersByTime(400);
    burst(40);
    expect(said).toEqual([{ clientId: "phone", chunks: 2, ms: 40 }]);
    // The second is up: what was shed since is said, though the client sent nothing more
    // (the attack found counts that only the stats ever showed).
    vi.advanceTimersByTime(300);
    expect(said).toEqual([
      { clientId: "phone", chunks: 2, ms: 40 },
      { clientId: "phone", chunks: 4, ms: 80 },
    ]);
    burst(60);
    vi.advanceTimersByTime(1000);
    expect(said).toEqual([
      { clientId: "phone", chunks: 2, ms: 40 },
      { clientId: "phone", chunks: 4, ms: 80 },
      { clientId: "phone", chunks: 2, ms: 40 },
    ]);
    // Every chunk shed was said: the stats and what the client heard agree.
    const told = said.reduce((n, s) => n + s.chunks, 0);
    expect(told).toBe(intake.shedTotal.chunks);
  });

  it("another frame of the socket flushes its queued audio first: nothing overtakes it", () => {
    const { intake, delivered, probe } = make(true);
    const phone = ws("phone");
    for (let n = 1; n <= 3; n++) intake.audio(phone, chunk(n));
    // The shell flushes before it hands on the socket's next frame (an audio_end, a text…).
    intake.flush(phone);
    expect(numbers(delivered)).toEqual([1, 2, 3]);
    // Caught up again: the next chunk goes straight on, the timer finds nothing queued.
    (probe as { behind: boolean }).behind = false;
    intake.audio(phone, chunk(4));
    vi.advanceTimersByTime(0);
    expect(numbers(delivered)).toEqual([1, 2, 3, 4]);
  });

  it("while the flush waits behind a flood of messages, a socket's queue is cut as it grows", () => {
    const { intake, delivered, said } = make(true);
    const phone = ws("phone");
    // 1000 chunks (20 s) before the loop's turn ends: the queue never holds more than 65.
    let longest = 0;
    for (let n = 1; n <= 1000; n++) {
      intake.audio(phone, chunk(n % 256));
      longest = Math.max(longest, intake.queued.get(phone)?.length ?? 0);
    }
    expect(longest).toBeLessThanOrEqual(65);
    expect(delivered).toEqual([]);
    vi.advanceTimersByTime(0);
    // The newest 200 ms go on; the 990 before them are shed, and said once.
    expect(numbers(delivered)).toEqual(Array.from({ length: 10 }, (_, i) => (991 + i) % 256));
    expect(said).toEqual([{ clientId: "phone", chunks: 990, ms: 19_800 }]);
    expect(intake.shedTotal).toEqual({ chunks: 990, ms: 19_800 });
  });

  it("a socket that left is forgotten: its queue is not delivered after it", () => {
    const { intake, delivered } = make(true);
    const phone = ws("phone");
    intake.audio(phone, chunk(1));
    intake.forget(phone);
    vi.advanceTimersByTime(0);
    expect(delivered).toEqual([]);
  });
});

describe("the load probe", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("is behind when its timer fires late, caught up when one is on time, and stops when audio stops", () => {
    let now = 0;
    const probe = new LoadProbe(() => now);
    probe.noteAudio();
    expect(vi.getTimerCount()).toBe(1);
    // On time.
    now = 200;
    vi.advanceTimersByTime(200);
    expect(probe.behind).toBe(false);
    // The loop was busy: the timer due at 400 fires at 480.
    now = 480;
    probe.noteAudio();
    vi.advanceTimersByTime(200);
    expect(probe.behind).toBe(true);
    expect(probe.worstLateMs).toBe(80);
    // A little late is not yet caught up; on time is.
    now = 720;
    vi.advanceTimersByTime(200);
    expect(probe.behind).toBe(true);
    now = 920;
    vi.advanceTimersByTime(200);
    expect(probe.behind).toBe(false);
    // No audio for a second: the timer stops (an idle object keeps none).
    for (let i = 0; i < 5; i++) {
      now += 200;
      vi.advanceTimersByTime(200);
    }
    expect(vi.getTimerCount()).toBe(0);
    expect(probe.behind).toBe(false);
  });

  it("says how late the loop is, or was within the last second (the rate limits allow for it)", () => {
    let now = 0;
    const probe = new LoadProbe(() => now);
    expect(probe.lateMs()).toBe(0);
    probe.noteAudio();
    now = 100;
    expect(probe.lateMs()).toBe(0);
    // Overdue by 300 ms: a flood holds the timer back.
    now = 500;
    expect(probe.lateMs()).toBe(300);
    // The timer fires 300 ms late; for a second after, that is still how late it was.
    vi.advanceTimersByTime(200);
    now = 600;
    expect(probe.lateMs()).toBe(300);
    // The next timer, on time: not late any more.
    now = 700;
    probe.noteAudio();
    vi.advanceTimersByTime(200);
    expect(probe.lateMs()).toBe(0);
  });

  it("a chunk taken past the timer's due time says behind, before the timer gets its turn", () => {
    let now = 0;
    const probe = new LoadProbe(() => now);
    probe.noteAudio();
    // Chunks on time: not behind.
    now = 150;
    probe.noteAudio();
    now = 250;
    probe.noteAudio();
    expect(probe.behind).toBe(false);
    // The loop is flooded: the timer due at 200 has not fired, and a chunk is taken at 300.
    now = 300;
    probe.noteAudio();
    expect(probe.behind).toBe(true);
    expect(probe.worstLateMs).toBe(100);
    // The timer gets its turn once the flood is taken; the next, on time, says caught up.
    now = 900;
    vi.advanceTimersByTime(200);
    expect(probe.behind).toBe(true);
    now = 1100;
    probe.noteAudio();
    vi.advanceTimersByTime(200);
    expect(probe.behind).toBe(false);
  });
});
