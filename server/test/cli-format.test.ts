import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { JobState } from "@runlater/sdk/gen/job_pb.js";
import { InvalidArgumentError } from "commander";
import { describe, expect, it } from "vitest";
import { DEFAULT_URL, resolveUrl } from "../src/cli/client.js";
import { bodyBlock, bodyCell, bodyText, fields, formatAge, formatMs, table } from "../src/cli/output.js";
import { parseDurationMs, parseState, parseTimeMs } from "../src/cli/parse.js";
import { queueConfigFromFlags } from "../src/cli/queue-flags.js";

describe("durations", () => {
  it("parses units and sums of units", () => {
    expect(parseDurationMs("500ms")).toBe(500);
    expect(parseDurationMs("30s")).toBe(30_000);
    expect(parseDurationMs("5m")).toBe(300_000);
    expect(parseDurationMs("2h")).toBe(7_200_000);
    expect(parseDurationMs("7d")).toBe(604_800_000);
    expect(parseDurationMs("1h30m")).toBe(5_400_000);
    expect(parseDurationMs("1.5s")).toBe(1500);
    expect(parseDurationMs("0")).toBe(0);
  });

  it("refuses bare numbers, unknown units and junk", () => {
    for (const bad of ["30", "5x", "", "s", "-5s", "1h junk", "1e3s"]) {
      expect(() => parseDurationMs(bad), bad).toThrow(InvalidArgumentError);
    }
  });

  it("formats in the syntax it parses", () => {
    for (const ms of [500, 30_000, 300_000, 5_400_000, 604_800_000, 90_061_001]) {
      expect(parseDurationMs(formatMs(ms))).toBe(ms);
    }
    expect(formatMs(90_061_001)).toBe("1d1h1m1s1ms");
    expect(formatMs(0)).toBe("0s");
  });

  it("shows ages in at most two units", () => {
    expect(formatAge(durationFromMs(14_734))).toBe("14s");
    expect(formatAge(durationFromMs(3_725_000))).toBe("1h2m");
    expect(formatAge(durationFromMs(250))).toBe("250ms");
    expect(formatAge(undefined)).toBe("0s");
  });
});

describe("times and states", () => {
  it("takes RFC 3339 or a delay from now", () => {
    expect(parseTimeMs("2026-05-01T12:00:00Z")).toBe(Date.UTC(2026, 4, 1, 12));
    expect(parseTimeMs("2026-05-01T12:00:00.5-01:00")).toBe(Date.UTC(2026, 4, 1, 13, 0, 0, 500));
    expect(parseTimeMs("10s", () => 1_000)).toBe(11_000);
    expect(() => parseTimeMs("2026-05-01")).toThrow(InvalidArgumentError);
    expect(() => parseTimeMs("soon")).toThrow(InvalidArgumentError);
  });

  it("parses state names in any case", () => {
    expect(parseState("failed")).toBe(JobState.FAILED);
    expect(parseState("Pending")).toBe(JobState.PENDING);
    expect(() => parseState("unspecified")).toThrow(InvalidArgumentError);
  });
});

describe("bodies", () => {
  const enc = (s: string) => new TextEncoder().encode(s);

  it("treats valid UTF-8 without control characters as text", () => {
    expect(bodyText(enc("héllo\n\ttab"))).toBe("héllo\n\ttab");
    expect(bodyText(new Uint8Array([0xff, 0xfe]))).toBeUndefined();
    expect(bodyText(enc("bell\u0007"))).toBeUndefined();
    expect(bodyText(enc("escape\u001b[31m"))).toBeUndefined();
  });

  it("labels the encoding it used", () => {
    expect(bodyBlock(enc("hi"))).toBe("body (utf-8, 2 bytes):\nhi\n");
    expect(bodyBlock(new Uint8Array([0xff]))).toBe("body (base64, 1 bytes):\n/w==\n");
    expect(bodyCell(enc("a\nb"))).toBe('"a\\nb"');
    expect(bodyCell(new Uint8Array([0xff]))).toBe("base64:/w==");
    expect(bodyCell(enc("x".repeat(100)), 10)).toBe(`"xxxxxxxx…`);
  });
});

describe("layout", () => {
  it("aligns table columns", () => {
    expect(
      table(
        ["A", "BB"],
        [
          ["long", "1"],
          ["s", "22"],
        ],
      ),
    ).toBe("A     BB\nlong  1\ns     22\n");
  });

  it("aligns field values, continuation lines included", () => {
    expect(
      fields([
        ["a", "1"],
        ["long", "x\ny"],
      ]),
    ).toBe("a:     1\nlong:  x\n       y\n");
  });
});

describe("url", () => {
  it("prefers the flag, then RUNLATER_URL, then the default", () => {
    expect(resolveUrl("http://flag:1", { RUNLATER_URL: "http://env:2" })).toBe("http://flag:1");
    expect(resolveUrl(undefined, { RUNLATER_URL: "http://env:2" })).toBe("http://env:2");
    expect(resolveUrl(undefined, {})).toBe(DEFAULT_URL);
    expect(DEFAULT_URL).toBe("http://127.0.0.1:8080");
  });
});

describe("queue flags", () => {
  const fieldMaskPaths = (values: Parameters<typeof queueConfigFromFlags>[0]) => queueConfigFromFlags(values).paths;

  it("names exactly the given fields in the mask", () => {
    expect(fieldMaskPaths({})).toEqual([]);
    expect(fieldMaskPaths({ resume: true })).toEqual(["paused"]);
    expect(fieldMaskPaths({ retryLinearSteps: 0, maxDequeuePerSecond: 0 })).toEqual([
      "retry_policy.linear_steps",
      "max_dequeue_per_second",
    ]);
  });
});
