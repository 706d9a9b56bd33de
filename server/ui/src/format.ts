/** Pure formatting of what the API returns: numbers, times, durations, bodies. */
import type { Duration, Timestamp } from "@bufbuild/protobuf/wkt";
import { JobState } from "@runlater/sdk/gen/job_pb.js";

export function count(n: bigint | number): string {
  return Number(n).toLocaleString("en-US");
}

export function timestampMs(t: Timestamp | undefined): number | undefined {
  return t === undefined ? undefined : Number(t.seconds) * 1000 + Math.floor(t.nanos / 1e6);
}

export function durationMs(d: Duration | undefined): number {
  return d === undefined ? 0 : Number(d.seconds) * 1000 + Math.round(d.nanos / 1e6);
}

export function msToDuration(ms: number): { seconds: bigint; nanos: number } {
  const whole = Math.floor(ms / 1000);
  return { seconds: BigInt(whole), nanos: Math.round((ms - whole * 1000) * 1e6) };
}

/** "2026-11-26 16:12:47" in the browser's time zone; "—" when unset. */
export function dateTime(t: Timestamp | number | undefined): string {
  const ms = typeof t === "number" || t === undefined ? t : timestampMs(t);
  if (ms === undefined || ms === 0) return "—";
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/** "2026-11-27 02:00:00" in the IANA time zone `zone` (a schedule's); undefined if the browser does not know it. */
export function zonedDateTime(ms: number, zone: string): string | undefined {
  try {
    // Swedish dates read as ISO: 2026-11-27 02:00:00.
    return new Intl.DateTimeFormat("sv-SE", { timeZone: zone, dateStyle: "short", timeStyle: "medium" }).format(ms);
  } catch {
    return undefined;
  }
}

/** "1 run", "3 runs". */
export function plural(n: number, noun: string): string {
  return `${count(n)} ${noun}${n === 1 ? "" : "s"}`;
}

/** A span as a person reads it: "850 ms", "42 s", "3 min 5 s", "2 h 10 min", "3 d 4 h". */
export function span(ms: number): string {
  if (!Number.isFinite(ms)) return "—";
  const neg = ms < 0 ? "−" : "";
  ms = Math.abs(ms);
  if (ms < 1000) return `${neg}${Math.round(ms)} ms`;
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${neg}${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${neg}${m} min${s % 60 ? ` ${s % 60} s` : ""}`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${neg}${h} h${m % 60 ? ` ${m % 60} min` : ""}`;
  const d = Math.floor(h / 24);
  return `${neg}${d} d${h % 24 ? ` ${h % 24} h` : ""}`;
}

/** Jobs per second: "0", "0.4", "12", "1,250". */
export function rate(perSecond: number | undefined): string {
  if (perSecond === undefined || !Number.isFinite(perSecond)) return "—";
  if (perSecond === 0) return "0";
  if (perSecond < 10) return perSecond.toFixed(1);
  return Math.round(perSecond).toLocaleString("en-US");
}

export const stateNames: Record<JobState, string> = {
  [JobState.UNSPECIFIED]: "any",
  [JobState.PENDING]: "pending",
  [JobState.RUNNING]: "running",
  [JobState.SUCCEEDED]: "succeeded",
  [JobState.FAILED]: "failed",
};

/** Largest part of a body shown as text or JSON (bodies go up to 16 MiB). */
export const MAX_TEXT_BYTES = 256 * 1024;
/** Largest part of a body shown as hex (a hex dump is ~4.3 times the bytes). */
export const MAX_HEX_BYTES = 64 * 1024;

export type BodyView = "text" | "json" | "hex";

/** The body as UTF-8 text (invalid sequences shown as U+FFFD), at most MAX_TEXT_BYTES of it. */
export function bodyText(body: Uint8Array): string {
  return new TextDecoder("utf-8", { fatal: false }).decode(body.subarray(0, MAX_TEXT_BYTES));
}

/** The body pretty-printed as JSON, or why it is not JSON. */
export function bodyJson(body: Uint8Array): { ok: true; text: string } | { ok: false; reason: string } {
  if (body.length > MAX_TEXT_BYTES) return { ok: false, reason: `the body is over ${MAX_TEXT_BYTES / 1024} KiB` };
  try {
    return {
      ok: true,
      text: JSON.stringify(JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(body)), null, 2),
    };
  } catch (err) {
    return { ok: false, reason: `not JSON (${err instanceof Error ? err.message : String(err)})` };
  }
}

/** A hex dump: offset, 16 bytes in hex, the same bytes as ASCII (. for the rest). */
export function bodyHex(body: Uint8Array): string {
  const lines: string[] = [];
  const shown = body.subarray(0, MAX_HEX_BYTES);
  for (let at = 0; at < shown.length; at += 16) {
    const row = shown.subarray(at, at + 16);
    const hex = Array.from(row, (b) => b.toString(16).padStart(2, "0")).join(" ");
    const ascii = Array.from(row, (b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : ".")).join("");
    lines.push(`${at.toString(16).padStart(8, "0")}  ${hex.padEnd(47)}  ${ascii}`);
  }
  return lines.join("\n");
}
