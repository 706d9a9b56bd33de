/** The test control service's manual clock keeps whole milliseconds, whatever the timers ask. */
import { expect, it } from "vitest";
import { ManualClock } from "../../src/domain/clock.js";

it("fires a timer of a fractional delay at a whole millisecond, so times stay encodable", async () => {
  const clock = new ManualClock(1_000_000);
  const seen: number[] = [];
  clock.setTimer(5000 / 3, () => seen.push(clock.now())); // a lease renewal: ttl / 3
  await clock.advance(5000);
  expect(seen).toEqual([1_001_667]);
  expect(clock.now()).toBe(1_005_000);
});

it("fires a timer set after an advance for a time already reached at once, not at the next advance", async () => {
  const clock = new ManualClock(1_000_000);
  await clock.advance(5000);
  // A refill that outlived the advance arms the next due timer for a time now past.
  let fired = false;
  clock.setTimer(1_002_000 - clock.now(), () => (fired = true));
  await new Promise((resolve) => setImmediate(resolve));
  expect(fired).toBe(true);
  // A later one still waits for advance().
  let later = false;
  clock.setTimer(10, () => (later = true));
  await new Promise((resolve) => setImmediate(resolve));
  expect(later).toBe(false);
  await clock.advance(10);
  expect(later).toBe(true);
  // And a due timer cancelled before its turn does not fire.
  let cancelled = false;
  clock.setTimer(0, () => (cancelled = true))();
  await new Promise((resolve) => setImmediate(resolve));
  expect(cancelled).toBe(false);
});
