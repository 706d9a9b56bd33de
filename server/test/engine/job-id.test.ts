import { describe, expect, it } from "vitest";
import { newClaimToken, newJobId, parseJobId } from "../../src/domain/job-id.js";

describe("job ids and claim tokens", () => {
  it("gives job ids that name their queue and partition and never repeat", () => {
    const ids = Array.from({ length: 1000 }, () => newJobId("emails", 7, Date.now()));
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(parseJobId(id)).toEqual({ queue: "emails", partition: 7 });
    expect(parseJobId("not a job id")).toBeUndefined();
    // The time part follows `now` from one call to the next (base 36).
    expect(newJobId("q", 0, 36 ** 3)).toMatch(/^q\.0\.1000[0-9a-f]{6}/);
    expect(newJobId("q", 0, 36 ** 4)).toMatch(/^q\.0\.10000[0-9a-f]{6}/);
  });

  it("gives 16-character URL-safe claim tokens that do not repeat, across refills of the random pool", () => {
    // More than the pool's 256 tokens, so the pool is drawn again in between.
    const tokens = Array.from({ length: 2000 }, () => newClaimToken());
    expect(new Set(tokens).size).toBe(tokens.length);
    for (const token of tokens) expect(token).toMatch(/^[A-Za-z0-9_-]{16}$/);
  });
});
