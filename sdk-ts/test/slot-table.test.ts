import { describe, expect, it } from "vitest";
import { SlotTable } from "../src/slot-table.js";

describe("SlotTable", () => {
  it("keeps each value in a slot of its own until it is removed, and counts them", () => {
    const table = new SlotTable<{ id: string }>();
    const a = { id: "a" };
    const b = { id: "b" };
    const [sa, sb] = [table.add(a), table.add(b)];
    expect(sa).not.toBe(sb);
    expect(table.size).toBe(2);
    expect(table.get(sa)).toBe(a);
    expect(table.find((v) => v.id === "b")).toBe(b);
    expect(table.remove(sa, a)).toBe(true);
    expect(table.remove(sa, a)).toBe(false);
    expect(table.get(sa)).toBeUndefined();
    expect(table.find((v) => v.id === "a")).toBeUndefined();
    expect(table.size).toBe(1);
    expect(table.values()).toEqual([b]);
  });

  it("gives a freed slot to the next value, and a stale owner cannot remove that value", () => {
    const table = new SlotTable<string>();
    const first = table.add("first");
    table.add("second");
    table.remove(first, "first");
    const third = table.add("third");
    expect(third).toBe(first); // reused: the array does not grow past the most ever held at once
    expect(table.remove(first, "first")).toBe(false);
    expect(table.get(third)).toBe("third");
    expect(table.size).toBe(2);
  });

  it("holds no more slots than values at the busiest moment, however many come and go", () => {
    const table = new SlotTable<number>();
    const held: Array<[number, number]> = [];
    for (let i = 0; i < 10_000; i++) {
      held.push([table.add(i), i]);
      if (held.length > 100) {
        const [slot, value] = held.shift()!;
        table.remove(slot, value);
      }
    }
    expect(table.size).toBe(100);
    expect(Math.max(...held.map(([slot]) => slot))).toBeLessThan(101);
  });

  it("forgets everything on clear, and handles from before cannot remove what comes after", () => {
    const table = new SlotTable<string>();
    const old = table.add("old");
    table.clear();
    expect(table.size).toBe(0);
    expect(table.values()).toEqual([]);
    const slot = table.add("new");
    expect(slot).toBe(old);
    expect(table.remove(old, "old")).toBe(false);
    expect(table.size).toBe(1);
  });
});
