/**
 * The read budget's rules (api/read-budget.ts): calls take bytes while they fit; past the
 * bound they wait in arrival order; the oldest call still reading may go past it while the
 * others hold no more than the bound, so calls that each hold part of the budget and all
 * want more cannot deadlock, and one request larger than the bound is still read.
 */
import { describe, expect, it } from "vitest";
import { ReadBudget } from "../../src/api/read-budget.js";

describe("ReadBudget", () => {
  it("lets calls take bytes while they fit, and makes the next wait until bytes come back", async () => {
    const budget = new ReadBudget(100);
    const [oldest, a, b] = [budget.open(), budget.open(), budget.open()]; // `oldest` is still reading
    expect(a.take(60)).toBeUndefined();
    a.doneReading(); // a is being handled
    expect(b.take(30)).toBeUndefined();
    const waiting = b.take(30);
    expect(waiting).toBeInstanceOf(Promise);
    expect(budget.waiting).toBe(1);
    a.close();
    await waiting;
    expect(budget.held).toBe(60);
    expect(budget.waiting).toBe(0);
    oldest.close();
  });

  it("lets the oldest call still reading past the bound, so two half-read calls do not deadlock", async () => {
    const budget = new ReadBudget(100);
    const [a, b] = [budget.open(), budget.open()];
    expect(a.take(50)).toBeUndefined();
    expect(b.take(50)).toBeUndefined();
    const bMore = b.take(40); // b is not the oldest: waits
    expect(bMore).toBeInstanceOf(Promise);
    await a.take(40); // a is: goes on (the others hold 50, within the bound)
    expect(budget.held).toBe(140);
    a.close(); // a's call ends
    await bMore;
    expect(budget.held).toBe(90);
  });

  it("reads a single request larger than the whole budget", async () => {
    const budget = new ReadBudget(100);
    const a = budget.open();
    for (let i = 0; i < 5; i++) await a.take(64);
    expect(budget.held).toBe(320);
  });

  it("does not let the oldest pass while calls being handled hold more than the bound", async () => {
    const budget = new ReadBudget(100);
    const [handled, reader] = [budget.open(), budget.open()];
    await handled.take(120); // oldest while reading: past the bound
    handled.doneReading();
    const more = reader.take(10);
    expect(more).toBeInstanceOf(Promise); // others hold 120 > 100
    handled.close();
    await more;
  });

  it("drops a waiting call whose client went away, and lets the others on", async () => {
    const budget = new ReadBudget(100);
    const [oldest, a, b, c] = [budget.open(), budget.open(), budget.open(), budget.open()];
    a.take(90);
    a.doneReading();
    const gone = new AbortController();
    const bWait = b.take(50, gone.signal);
    const cWait = c.take(5);
    expect(budget.waiting).toBe(1); // c fits: 95
    gone.abort(new Error("client went away"));
    await expect(bWait).rejects.toThrow("client went away");
    await cWait;
    expect(budget.waiting).toBe(0);
    expect(budget.held).toBe(95);
    oldest.close();
  });

  it("does not grant a call that ended while it waited", async () => {
    const budget = new ReadBudget(100);
    const [oldest, a, b] = [budget.open(), budget.open(), budget.open()];
    a.take(100);
    a.doneReading();
    const bWait = b.take(50);
    b.close(); // its response closed: the client went away
    await expect(bWait).rejects.toThrow("the call is over");
    a.close();
    expect(budget.held).toBe(0);
    await expect(b.take(10)).rejects.toThrow("the call is over");
    expect(budget.held).toBe(0);
    oldest.close();
  });

  it("never holds more than the bound plus one request, whatever the order of calls", async () => {
    const budget = new ReadBudget(1000);
    const maxRequest = 400;
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    let peak = 0;
    const call = async () => {
      const hold = budget.open();
      const size = 1 + rand(maxRequest);
      for (let read = 0; read < size; ) {
        const piece = Math.min(size - read, 1 + rand(64));
        const wait = hold.take(piece);
        if (wait) await wait;
        read += piece;
        peak = Math.max(peak, budget.held);
        if (rand(3) === 0) await new Promise((r) => setImmediate(r));
      }
      hold.doneReading();
      await new Promise((r) => setTimeout(r, rand(3)));
      hold.close();
    };
    await Promise.all(Array.from({ length: 200 }, call)); // all finish: no deadlock
    expect(peak).toBeLessThanOrEqual(1000 + maxRequest);
    expect(budget.held).toBe(0);
  });
});
