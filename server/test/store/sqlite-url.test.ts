import { describe, expect, it } from "vitest";
import { DEFAULT_SQLITE_PATH, parseSqliteUrl } from "../../src/store/sqlite/sqlite-url.js";

describe("sqlite: store URLs", () => {
  it("takes a relative or absolute path, with or without an empty host, and decodes %-escapes", () => {
    expect(parseSqliteUrl("sqlite:data/runlater.db")).toEqual({ path: "data/runlater.db", synchronous: "normal" });
    expect(parseSqliteUrl("sqlite:./x.db").path).toBe("./x.db");
    expect(parseSqliteUrl("sqlite:/var/lib/runlater.db").path).toBe("/var/lib/runlater.db");
    expect(parseSqliteUrl("sqlite:///var/lib/runlater.db").path).toBe("/var/lib/runlater.db");
    expect(parseSqliteUrl("sqlite://localhost/var/lib/runlater.db").path).toBe("/var/lib/runlater.db");
    expect(parseSqliteUrl("sqlite:my%20dir/a%3Fb.db").path).toBe("my dir/a?b.db");
    expect(parseSqliteUrl(`sqlite:${DEFAULT_SQLITE_PATH}`).path).toBe("runlater-data/runlater.db");
  });

  it("offers synchronous=full, the setting that survives power loss", () => {
    expect(parseSqliteUrl("sqlite:x.db?synchronous=full").synchronous).toBe("full");
    expect(parseSqliteUrl("sqlite:x.db?synchronous=NORMAL").synchronous).toBe("normal");
  });

  it("refuses, with the forms it takes, a host, an empty path, bad escapes and unknown parameters", () => {
    expect(() => parseSqliteUrl("sqlite://data.db")).toThrow(
      /names a host \("data\.db"\).*sqlite:data\.db for a relative path/,
    );
    expect(() => parseSqliteUrl("sqlite:")).toThrow(/names no file; use sqlite:PATH/);
    expect(() => parseSqliteUrl("sqlite:///")).not.toThrow(); // "/": a directory, refused when opened
    expect(() => parseSqliteUrl("sqlite:a%zz.db")).toThrow(/malformed %-escape/);
    expect(() => parseSqliteUrl("sqlite:x.db?sync=full")).toThrow(/unknown parameter "sync".*synchronous=normal\|full/);
    expect(() => parseSqliteUrl("sqlite:x.db?synchronous=extra")).toThrow(
      /normal \(the default\) or full, not "extra"/,
    );
    expect(() => parseSqliteUrl("sqlite:a%00b.db")).toThrow(/NUL/);
  });
});
