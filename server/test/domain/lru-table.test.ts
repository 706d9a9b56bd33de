import { describe, expect, it } from "vitest";
import { LruTable } from "../../src/domain/lru-table.js";

describe("LruTable", () => {
  it("drops the least recently used past its size, a read or a write counting as a use", () => {
    const table = new LruTable<number>(3);
    table.set("a", 1);
    table.set("b", 2);
    table.set("c", 3);
    expect(table.get("a")).toBe(1); // a is now the most recent: b goes first
    table.set("d", 4);
    expect(table.get("b")).toBeUndefined();
    expect(table.size).toBe(3);
    table.set("c", 30); // c is now the most recent: a goes next
    table.set("e", 5);
    expect(table.get("a")).toBeUndefined();
    expect([table.get("c"), table.get("d"), table.get("e")]).toEqual([30, 4, 5]);
  });

  it("take() hands a value over once; delete() forgets it", () => {
    const table = new LruTable<string>(10);
    table.set("q.0.x", "ctx");
    expect(table.take("q.0.x")).toBe("ctx");
    expect(table.take("q.0.x")).toBeUndefined();
    table.set("q.0.y", "other");
    expect(table.delete("q.0.y")).toBe(true);
    expect(table.delete("q.0.y")).toBe(false);
    expect(table.size).toBe(0);
  });

  it("takes any string as an id, those an object has by inheritance included", () => {
    const table = new LruTable<number>(10);
    for (const [i, id] of ["__proto__", "constructor", "toString", ""].entries()) table.set(id, i);
    expect(table.size).toBe(4);
    expect(table.get("__proto__")).toBe(0);
    expect(table.get("constructor")).toBe(1);
  });

  it("drops the least recently used past its weight too, keeping the newest however heavy, and counts what leaves", () => {
    const table = new LruTable<string>(100, { weigh: (v) => v.length, maxWeight: 10 });
    table.set("a", "aaaa");
    table.set("b", "bbbb");
    expect(table.get("a")).toBe("aaaa"); // b is now the least recently used
    table.set("c", "cccc"); // 12 > 10: b goes
    expect(table.get("b")).toBeUndefined();
    expect([table.get("a"), table.get("c")]).toEqual(["aaaa", "cccc"]);
    table.set("a", "a"); // a lighter value for a: 5, room again
    table.set("d", "dddd"); // 9
    expect(table.size).toBe(3);
    expect(table.take("c")).toBe("cccc"); // 5 left
    table.set("e", "eeeee"); // 10: nothing goes
    expect(table.size).toBe(3);
    table.set("big", "x".repeat(50)); // heavier than the bound alone: everything else goes, it stays
    expect(table.size).toBe(1);
    expect(table.get("big")).toHaveLength(50);
    table.set("f", "f"); // the heavy one is now the oldest, and goes
    expect([table.get("big"), table.get("f")]).toEqual([undefined, "f"]);
  });
});
