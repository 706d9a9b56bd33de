import { describe, expect, it } from "vitest";
import { ArrivalList } from "../../src/domain/arrival-list.js";

describe("ArrivalList", () => {
  it("keeps arrival order through removals at the head, the middle and the tail", () => {
    const list = new ArrivalList<string>();
    const [a, b, c, d] = ["a", "b", "c", "d"].map((v) => list.add(v));
    expect(list.values()).toEqual(["a", "b", "c", "d"]);
    expect(list.remove(b!)).toBe(true);
    expect(list.values()).toEqual(["a", "c", "d"]);
    expect(list.remove(a!)).toBe(true);
    expect(list.oldest()).toBe("c");
    expect(list.remove(d!)).toBe(true);
    list.add("e");
    expect(list.values()).toEqual(["c", "e"]);
    expect(list.remove(c!)).toBe(true);
    expect(list.values()).toEqual(["e"]);
  });

  it("a removed entry forgets its neighbours, and removing it again changes nothing", () => {
    const list = new ArrivalList<number>();
    list.add(1);
    const two = list.add(2);
    list.add(3);
    expect(list.remove(two)).toBe(true);
    expect(two.prev).toBeUndefined();
    expect(two.next).toBeUndefined();
    expect(list.remove(two)).toBe(false);
    expect(list.values()).toEqual([1, 3]);
    expect(list.size).toBe(2);
  });

  it("renew() moves an entry to the newest place, keeping the entry", () => {
    const list = new ArrivalList<string>();
    const [a, , c] = ["a", "b", "c"].map((v) => list.add(v));
    list.renew(a!);
    expect(list.values()).toEqual(["b", "c", "a"]);
    list.renew(a!); // already the newest
    list.renew(c!);
    expect(list.values()).toEqual(["b", "a", "c"]);
    expect(list.size).toBe(3);
    list.remove(c!);
    list.renew(c!); // removed: stays out
    expect(list.values()).toEqual(["b", "a"]);
    expect(list.oldest()).toBe("b");
  });

  it("values() is a copy: members may remove themselves while it is gone through", () => {
    const list = new ArrivalList<() => void>();
    const seen: number[] = [];
    const entries = [0, 1, 2].map((i) => {
      const entry = list.add(() => {
        seen.push(i);
        list.remove(entry);
      });
      return entry;
    });
    for (const wake of list.values()) wake();
    expect(seen).toEqual([0, 1, 2]);
    expect(list.size).toBe(0);
    expect(list.oldest()).toBeUndefined();
    expect(entries.every((e) => !e.listed)).toBe(true);
  });
});
