import { describe, expect, it } from "vitest";
import {
  allowsQueue,
  newToken,
  parseToken,
  secretMatches,
  tokenFromString,
  wildcardMatch,
} from "../../src/domain/tokens.js";

describe("API tokens", () => {
  it("makes a token whose secret only its hash is kept of, and recognises it", () => {
    const { token, record } = newToken({ name: "ci", scopes: ["enqueue"], queues: [], now: 1, expiresAt: 0 });
    const parsed = parseToken(token)!;
    expect(parsed.id).toBe(record.id);
    expect(JSON.stringify(record)).not.toContain(parsed.secret);
    expect(secretMatches(record, parsed.secret)).toBe(true);
    // One character changed (to "A", or to "B" where it is "A": one secret in 64 ends in "A").
    const other = parsed.secret.endsWith("A") ? "B" : "A";
    expect(secretMatches(record, `${parsed.secret.slice(0, -1)}${other}`)).toBe(false);
    expect(parseToken("rl_short_x")).toBeUndefined();
  });

  it("takes an operator's own token string as the bootstrap token", () => {
    const { token } = newToken({ name: "x", scopes: ["admin"], queues: [], now: 1, expiresAt: 0 });
    const record = tokenFromString(token, { name: "bootstrap", scopes: ["admin"], now: 1 });
    expect(secretMatches(record, parseToken(token)!.secret)).toBe(true);
    expect(() => tokenFromString("hunter2", { name: "b", scopes: ["admin"], now: 1 })).toThrow(/rl_/);
  });

  it("refuses unknown scopes, bad patterns and past expiries, naming the field", () => {
    const make = (over: object) => () =>
      newToken({ name: "t", scopes: ["read"], queues: [], now: 10, expiresAt: 0, ...over });
    expect(make({ scopes: [] })).toThrow(/at least one scope/);
    expect(make({ scopes: ["root"] })).toThrow(/unknown scope "root"/);
    expect(make({ queues: ["emails?"] })).toThrow(/queue pattern/);
    expect(make({ expiresAt: 5 })).toThrow(/in the past/);
    expect(make({ name: "" })).toThrow(/name/);
  });

  it("limits a token to the queues its patterns match", () => {
    expect(wildcardMatch("emails*", "emails_eu")).toBe(true);
    expect(wildcardMatch("*_eu", "emails_eu")).toBe(true);
    expect(wildcardMatch("a*b*c", "axxbyyc")).toBe(true);
    expect(wildcardMatch("a*b*c", "axxbyy")).toBe(false);
    expect(wildcardMatch("exact", "exactly")).toBe(false);
    expect(wildcardMatch("*", "")).toBe(true);
    // Many stars over a long name that almost matches: still fast (no exponential backtracking).
    expect(wildcardMatch(`${"a*".repeat(30)}b`, "a".repeat(64))).toBe(false);
    const { record } = newToken({ name: "t", scopes: ["work"], queues: ["team_a_*"], now: 1, expiresAt: 0 });
    expect(allowsQueue(record, "team_a_mail")).toBe(true);
    expect(allowsQueue(record, "team_b_mail")).toBe(false);
  });
});
