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
