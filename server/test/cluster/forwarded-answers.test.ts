/**
 * A broker's memory of its answers to forwarded Dequeue calls: when the forwarding node
 * says it cancelled a call, the jobs of that call's answer go back (whichever of the two
 * messages comes first), and nothing else does.
 */
import { describe, expect, it } from "vitest";
import { FORWARDED_MEMORY_MS, ForwardedAnswers, type HandedOut } from "../../src/cluster/forwarded-answers.js";
import { ManualClock } from "../../src/domain/clock.js";

function answers() {
  const clock = new ManualClock();
  const released: HandedOut[][] = [];
  const memory = new ForwardedAnswers(clock, async (jobs) => {
    released.push(jobs);
  });
  return { clock, memory, released };
}

const jobs = (...ids: string[]) => ids.map((id) => ({ id, claimToken: `tok-${id}`, body: new Uint8Array(10) }));

describe("forwarded answers", () => {
  it("hands back an answer whose call the forwarding node cancelled, ids and tokens only", async () => {
    const { memory, released } = answers();
    await memory.answered("c1", jobs("j1", "j2"));
    await memory.answered("c2", jobs("j3"));
    await memory.cancelled("c1");
    expect(released).toEqual([
      [
        { id: "j1", claimToken: "tok-j1" },
        { id: "j2", claimToken: "tok-j2" },
      ],
    ]);
    await memory.cancelled("c1"); // told twice: nothing more
    expect(released).toHaveLength(1);
    expect(memory.size).toBe(2); // c2 answered, c1 remembered as cancelled
  });

  it("hands back an answer at once when the cancellation came first", async () => {
    const { memory, released } = answers();
    await memory.cancelled("c1");
    await memory.answered("c1", jobs("j1"));
    expect(released.map((r) => r.map((j) => j.id))).toEqual([["j1"]]);
    expect(memory.size).toBe(0);
  });

  it("forgets answers and cancellations after a while, and never keeps empty answers", async () => {
    const { clock, memory, released } = answers();
    await memory.answered("old", jobs("j1"));
    await memory.cancelled("early");
    await memory.answered("empty", []);
    expect(memory.size).toBe(2);
    await clock.advance(FORWARDED_MEMORY_MS);
    await memory.cancelled("old");
    await memory.answered("early", jobs("j2"));
    expect(released).toEqual([]);
    expect(memory.size).toBe(2); // both late messages, each waiting for the other half, until they age out too
    await clock.advance(FORWARDED_MEMORY_MS);
    await memory.answered("new", []);
    expect(memory.size).toBe(0);
  });

  it("keeps at most 100,000 jobs of answers, dropping the oldest answers first", async () => {
    const { memory, released } = answers();
    const many = (call: number) => Array.from({ length: 1000 }, (_, i) => ({ id: `c${call}-${i}`, claimToken: "t" }));
    for (let call = 0; call < 101; call++) await memory.answered(`c${call}`, many(call));
    expect(memory.size).toBe(100);
    await memory.cancelled("c0");
    await memory.cancelled("c1");
    expect(released.map((r) => r[0]!.id)).toEqual(["c1-0"]);
  });
});
