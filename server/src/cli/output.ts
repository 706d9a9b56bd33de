/**
 * Human-readable rendering: tables, key/value blocks, durations, times and bodies.
 * Machine output (--json) is in json.ts; nothing here is meant to be parsed.
 */
import { type Duration, durationMs, type Timestamp, timestampDate } from "@bufbuild/protobuf/wkt";
import { JobState } from "@runlater/sdk/gen/job_pb.js";

/** Left-aligned columns, two spaces apart, headers first. */
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) => {
    const text = cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join("  ");
    return `${text.trimEnd()}\n`;
  };
  return line(headers) + rows.map(line).join("");
}

/** "label:  value" lines with the values aligned; a value's later lines align under its first. */
export function fields(pairs: Array<[string, string]>): string {
  const width = Math.max(...pairs.map(([k]) => k.length)) + 1;
  const continuation = `\n${" ".repeat(width + 2)}`;
  return pairs.map(([k, v]) => `${`${k}:`.padEnd(width)}  ${v.replace(/\n/g, continuation)}\n`).join("");
}

const UNITS: Array<[string, number]> = [
  ["d", 86_400_000],
  ["h", 3_600_000],
  ["m", 60_000],
  ["s", 1000],
  ["ms", 1],
];

/** 90061000 → "1d1h1m1s": the same syntax the duration flags accept. */
export function formatMs(ms: number): string {
  if (ms <= 0) return "0s";
  let rest = Math.round(ms);
  let text = "";
  for (const [unit, size] of UNITS) {
    const n = Math.floor(rest / size);
    if (n > 0) text += `${n}${unit}`;
    rest -= n * size;
  }
  return text;
}

/** An age for people: whole seconds once past one, and only the two largest units (1h5m, 14s). */
export function formatAge(d: Duration | undefined): string {
  const ms = d ? durationMs(d) : 0;
  if (ms < 1000) return formatMs(ms);
  const units = formatMs(Math.floor(ms / 1000) * 1000).match(/\d+[a-z]+/g) ?? [];
  return units.slice(0, 2).join("");
}

export function formatDuration(d: Duration | undefined): string {
  return formatMs(d ? durationMs(d) : 0);
}

/** ISO 8601 in UTC, or "-" when unset. */
export function formatTime(t: Timestamp | undefined): string {
  return t ? timestampDate(t).toISOString() : "-";
}

export function stateName(state: JobState): string {
  return JobState[state] ?? String(state);
}

export function yesNo(b: boolean): string {
  return b ? "yes" : "no";
}

/** Rate limit in jobs/second; 0 means unlimited (QueueConfig.max_dequeue_per_second). */
export function formatRate(perSecond: number): string {
  return perSecond === 0 ? "unlimited" : `${perSecond}/s`;
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * A body as text when it is valid UTF-8 without control characters (other than tab and
 * newlines), else undefined. Control characters are excluded so a binary body cannot
 * drive the terminal.
 */
export function bodyText(body: Uint8Array): string | undefined {
  let text: string;
  try {
    text = strictUtf8.decode(body);
  } catch {
    return undefined;
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what this looks for (bodies that would garble a terminal).
  return /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(text) ? undefined : text;
}

/** A body for a detail view: a header saying how it is shown, then the body itself. */
export function bodyBlock(body: Uint8Array): string {
  const text = bodyText(body);
  const encoded = text ?? Buffer.from(body).toString("base64");
  const header = `body (${text === undefined ? "base64" : "utf-8"}, ${body.length} bytes):`;
  return `${header}\n${encoded}${encoded.endsWith("\n") || encoded === "" ? "" : "\n"}`;
}

/**
 * An ordering key for a cell or field: as given when it is plain printable text, else as
 * a JSON string (spaces would split a table column; control characters drive terminals).
 */
export function keyText(key: string): string {
  return /^[^\s\p{C}"]+$/u.test(key) ? key : JSON.stringify(key);
}

/** A body for one table cell: text as a quoted JSON string, binary as base64:…, cut to `max`. */
export function bodyCell(body: Uint8Array, max = 60): string {
  const text = bodyText(body);
  const cell = text === undefined ? `base64:${Buffer.from(body).toString("base64")}` : JSON.stringify(text);
  return cell.length > max ? `${cell.slice(0, max - 1)}…` : cell;
}
