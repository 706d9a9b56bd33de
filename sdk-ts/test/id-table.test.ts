import { describe, expect, it } from "vitest";
import { IdTable } from "../src/id-table.js";

describe("IdTable", () => {
  it("counts each id once, overwrites in place, and forgets what is deleted", () => {
    const table = new IdTable<number>();
    table.set("q.0.a", 1);
    table.set("q.0.b", 2);
    table.set("q.0.a", 3);
    expect(table.size).toBe(2);
    expect(table.get("q.0.a")).toBe(3);
    expect(table.delete("q.0.a")).toBe(true);
    expect(table.delete("q.0.a")).toBe(false);
    expect(table.get("q.0.a")).toBeUndefined();
    expect(table.size).toBe(1);
    expect(table.values()).toEqual([2]);
    table.clear();
    expect(table.size).toBe(0);
    expect(table.values()).toEqual([]);
  });

  it("takes any string as an id, those an object has by inheritance included", () => {
    const table = new IdTable<string>();
    for (const id of ["__proto__", "constructor", "toString", "hasOwnProperty", ""]) {
      expect(table.get(id)).toBeUndefined();
      table.set(id, `v${id}`);
    }
    expect(table.size).toBe(5);
    expect(table.get("__proto__")).toBe("v__proto__");
    expect(table.delete("constructor")).toBe(true);
    expect(table.size).toBe(4);
  });
});
