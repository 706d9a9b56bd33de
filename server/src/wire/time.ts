/** Protobuf Duration and Timestamp ↔ epoch milliseconds, for the API and for calls between nodes. */
import { create } from "@bufbuild/protobuf";
import { type Duration, DurationSchema, type Timestamp, TimestampSchema } from "@bufbuild/protobuf/wkt";
import { invalidArgument } from "../domain/errors.js";

export function durationToMs(d: Duration | undefined, field: string): number | undefined {
  if (!d) return undefined;
  const ms = Number(d.seconds) * 1000 + Math.trunc(d.nanos / 1_000_000);
  if (!Number.isFinite(ms) || ms < 0) throw invalidArgument(field, `${field} must not be negative`);
  return ms;
}

export function msToDuration(ms: number): Duration {
  return create(DurationSchema, { seconds: BigInt(Math.floor(ms / 1000)), nanos: (ms % 1000) * 1_000_000 });
}

export function timestampToMs(t: Timestamp | undefined): number | undefined {
  return t ? Number(t.seconds) * 1000 + Math.trunc(t.nanos / 1_000_000) : undefined;
}

// The last timestamp made: a Dequeue answer's jobs share their claim expiry and often their
// creation time (one enqueue batch), and messages are never changed once made.
let lastTimestamp: { ms: number; message: Timestamp } | undefined;

export function msToTimestamp(ms: number): Timestamp | undefined {
  if (ms <= 0) return undefined;
  if (lastTimestamp?.ms !== ms)
    lastTimestamp = {
      ms,
      message: create(TimestampSchema, { seconds: BigInt(Math.floor(ms / 1000)), nanos: (ms % 1000) * 1_000_000 }),
    };
  return lastTimestamp.message;
}
