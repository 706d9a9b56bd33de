/**
 * Seeded random requests for the fuzz test: garbage bytes and JSON, random messages built
 * from each method's input schema (then encoded, or damaged), and random framing for the
 * enveloped protocols. The same seed gives the same cases.
 */
import {
  create,
  type DescField,
  type DescMessage,
  type DescMethod,
  type Message,
  ScalarType,
  toBinary,
  toJsonString,
} from "@bufbuild/protobuf";
import { reflect } from "@bufbuild/protobuf/reflect";
import { type Call, concat, envelope, type Protocol } from "./fuzz-wire.js";

export type Random = () => number;

/** mulberry32: a small, fast, seedable PRNG (uniform in [0, 1)). */
export function seeded(seed: number): Random {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const int = (r: Random, n: number) => Math.floor(r() * n);
const pick = <T>(r: Random, items: readonly T[]): T => items[int(r, items.length)]!;

function randomBytes(r: Random, max: number): Uint8Array {
  return Uint8Array.from({ length: int(r, max + 1) }, () => int(r, 256));
}

/** Names the server knows (so a random message sometimes gets past the first check). */
export interface Known {
  queue: string;
  jobIds: string[];
}

function randomString(r: Random, known: Known, field: DescField): string {
  const name = field.name;
  if ((name === "queue" || name === "name") && r() < 0.5) return known.queue;
  if (name.includes("job_id") && known.jobIds.length > 0 && r() < 0.5) return pick(r, known.jobIds);
  return pick(r, [
    () => "",
    () => "x".repeat(int(r, 300)),
    () => String.fromCharCode(...Array.from({ length: int(r, 20) }, () => int(r, 0x3000))),
    () => "a\u0000b",
    () => "\ud83d\ude00".repeat(int(r, 5)),
    () => "^(a+)+$",
    () => "q.0.zzzz",
    () => `${known.queue}.${int(r, 300)}.${int(r, 1e9)}`,
  ])();
}

const int32s = [0, 1, -1, 2, 7, 1000, 2 ** 31 - 1, -(2 ** 31)];
const uint32s = [0, 1, 2, 7, 1000, 10_001, 2 ** 32 - 1];
const int64s = [0n, 1n, -1n, 1000n, 2n ** 63n - 1n, -(2n ** 63n)];
const uint64s = [0n, 1n, 1000n, 2n ** 64n - 1n];

function randomScalar(r: Random, known: Known, field: DescField, type: ScalarType): unknown {
  switch (type) {
    case ScalarType.STRING:
      return randomString(r, known, field);
    case ScalarType.BYTES:
      return randomBytes(r, 64);
    case ScalarType.BOOL:
      return r() < 0.5;
    case ScalarType.INT32:
    case ScalarType.SINT32:
    case ScalarType.SFIXED32:
      return pick(r, int32s);
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return pick(r, uint32s);
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
      return pick(r, int64s);
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return pick(r, uint64s);
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return pick(r, [0, -1, 0.5, 1e300, Number.NaN, Number.POSITIVE_INFINITY]);
  }
}

/** Durations and timestamps at the edges: negative, zero, tiny, the largest the types allow. */
const seconds = [0n, 1n, -1n, 60n, 86_400n * 366n, 315_576_000_000n, -62_135_596_800n, 253_402_300_799n];

function randomWellKnown(r: Random, desc: DescMessage): Message | undefined {
  switch (desc.typeName) {
    case "google.protobuf.Timestamp":
    case "google.protobuf.Duration":
      return create(desc, { seconds: pick(r, seconds), nanos: pick(r, [0, 1, 999_999_999, -5]) } as never);
    case "google.protobuf.FieldMask":
      return create(desc, {
        paths: Array.from({ length: int(r, 3) }, () => pick(r, ["paused", "priorities", "x", ""])),
      } as never);
  }
  return undefined;
}

/** One value for `field` (an element of it, for a list), as the reflection API takes it. */
function randomElement(r: Random, known: Known, field: DescField, depth: number): unknown {
  const kind = field.fieldKind === "list" ? field.listKind : field.fieldKind;
  if (kind === "scalar" && field.scalar !== undefined) return randomScalar(r, known, field, field.scalar);
  if (kind === "enum" && field.enum) return r() < 0.8 ? pick(r, field.enum.values).number : int(r, 100); // unknown values too
  if (kind === "message" && field.message && depth < 4)
    return reflect(field.message, randomMessage(r, field.message, known, depth + 1));
  return undefined;
}

/** A random message of `desc`: each field set or not, with values at the edges. */
export function randomMessage(r: Random, desc: DescMessage, known: Known, depth = 0): Message {
  const wellKnown = randomWellKnown(r, desc);
  if (wellKnown) return wellKnown;
  const message = reflect(desc);
  for (const field of desc.fields) {
    if (r() < 0.4 || field.fieldKind === "map") continue; // (no request of the public API has a map)
    try {
      if (field.fieldKind === "list") {
        const list = message.get(field) as { add(v: unknown): void };
        for (let i = int(r, 4); i > 0; i--) {
          const v = randomElement(r, known, field, depth);
          if (v !== undefined) list.add(v);
        }
      } else {
        const v = randomElement(r, known, field, depth);
        if (v !== undefined) message.set(field, v as never);
      }
    } catch {
      // A value the field cannot hold (the reflection API checks): leave the field unset.
    }
  }
  return message.message;
}

/** Damages an encoding: flips, cuts, inserts or appends bytes. */
function damage(r: Random, bytes: Uint8Array): Uint8Array {
  const out = Array.from(bytes);
  for (let n = 1 + int(r, 3); n > 0; n--) {
    const at = int(r, out.length + 1);
    switch (int(r, 4)) {
      case 0:
        if (out.length) out[Math.min(at, out.length - 1)] = int(r, 256);
        break;
      case 1:
        out.length = at;
        break;
      case 2:
        out.splice(at, 0, ...randomBytes(r, 8));
        break;
      default:
        out.push(...randomBytes(r, 8));
    }
  }
  return Uint8Array.from(out);
}

function randomJsonValue(r: Random, depth = 0): unknown {
  switch (int(r, depth > 2 ? 4 : 6)) {
    case 0:
      return null;
    case 1:
      return pick(r, [0, -1, 1e21, 3.5, 2 ** 53 + 1]);
    case 2:
      return pick(r, ["", "hello world", "aGk=", "!!", "1s", "-5s", "9999-12-31T23:59:59Z", "PENDING"]);
    case 3:
      return r() < 0.5;
    case 4:
      return Array.from({ length: int(r, 3) }, () => randomJsonValue(r, depth + 1));
    default:
      return Object.fromEntries(
        Array.from({ length: int(r, 4) }, () => [
          pick(r, ["queue", "jobs", "body", "name", "config", "limit", "wait", "jobIds", "x", "ack", "credit"]),
          randomJsonValue(r, depth + 1),
        ]),
      );
  }
}

/** One message's bytes: a random message encoded, damaged, or plain garbage. */
function messageBytes(r: Random, method: DescMethod, binary: boolean, known: Known): Uint8Array {
  const kind = int(r, 3);
  if (kind === 0) {
    return binary
      ? randomBytes(r, 200)
      : new TextEncoder().encode(r() < 0.8 ? JSON.stringify(randomJsonValue(r)) : '{"queue":');
  }
  const message = randomMessage(r, method.input, known);
  let encoded: Uint8Array;
  if (binary) encoded = toBinary(method.input, message);
  else {
    try {
      encoded = new TextEncoder().encode(toJsonString(method.input, message));
    } catch {
      // A timestamp JSON cannot carry: send its binary form instead, as JSON (garbage).
      encoded = toBinary(method.input, message);
    }
  }
  return kind === 1 ? encoded : damage(r, encoded);
}

/** Envelopes around 0–3 messages, sometimes with wrong flags or a wrong declared length. */
function framed(r: Random, method: DescMethod, binary: boolean, known: Known, protocol: Protocol): Uint8Array {
  if (r() < 0.1) return randomBytes(r, 40); // not framed at all
  const count = r() < 0.8 ? 1 : pick(r, [0, 2, 3]);
  const parts: Uint8Array[] = [];
  for (let i = 0; i < count; i++) {
    const data = messageBytes(r, method, binary, known);
    const flags = r() < 0.85 ? 0 : pick(r, [1, 2, 0x80, 0xff]);
    const length = r() < 0.9 ? data.byteLength : pick(r, [0, data.byteLength + 7, 2 ** 31]);
    parts.push(envelope(data, flags, length));
  }
  if (protocol === "connect-stream" && r() < 0.5) parts.push(envelope(new TextEncoder().encode("{}"), 2));
  return concat(parts);
}

/** Keeps long polls and streams short: every case carries a deadline of a few hundred ms. */
function deadline(protocol: Protocol, ms: number): Record<string, string> {
  return protocol === "grpc" || protocol === "grpc-web"
    ? { "grpc-timeout": `${ms}m` }
    : { "connect-timeout-ms": String(ms) };
}

/** Headers a careless client sends: an encoding it does not use, a malformed timeout. */
function oddHeaders(r: Random, protocol: Protocol): Record<string, string> {
  if (r() < 0.85) return {};
  const grpcish = protocol === "grpc" || protocol === "grpc-web";
  return pick<Record<string, string>>(r, [
    grpcish
      ? { "grpc-encoding": "gzip" }
      : protocol === "connect"
        ? { "content-encoding": "gzip" }
        : { "connect-content-encoding": "gzip" },
    grpcish ? { "grpc-encoding": "snappy" } : { "content-encoding": "snappy" },
    grpcish ? { "grpc-timeout": "abc" } : { "connect-timeout-ms": "-1" },
  ]);
}

export function randomCall(r: Random, methods: DescMethod[], known: Known): Call {
  const method = pick(r, methods);
  const streaming = method.methodKind !== "unary";
  const protocol: Protocol = streaming
    ? pick(r, ["grpc", "connect-stream"] as const)
    : pick(r, ["connect", "grpc", "grpc-web"] as const);
  const binary = r() < 0.6;
  const body =
    protocol === "connect" ? messageBytes(r, method, binary, known) : framed(r, method, binary, known, protocol);
  return {
    path: `${method.parent.typeName}/${method.name}`,
    protocol,
    binary,
    body,
    http1: (protocol === "connect" || protocol === "grpc-web") && r() < 0.5,
    headers: { ...deadline(protocol, 300), ...oddHeaders(r, protocol) },
  };
}
