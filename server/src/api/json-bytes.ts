/**
 * Strict base64 for the bytes fields of JSON requests. protobuf-es decodes a JSON bytes
 * field leniently: it skips spaces, tabs and newlines, takes "=" anywhere and drops a
 * dangling last character, so `"body": "hello world"` was stored as the bytes of
 * "helloworlQ==" and answered 200. The protobuf JSON mapping allows standard or URL-safe
 * base64, padded or not, and nothing else: anything else is refused here with
 * invalid_argument naming the field, and nothing is stored.
 *
 * How: connect-es hands a JSON request's bytes to `jsonOptions.textDecoder` before
 * protobuf-es parses the text, and those options can be set per method. So every method
 * whose input has a bytes field somewhere (Enqueue's jobs[].body, Checkpoint's
 * checkpoints[].new_body …, found from the schema) gets a decoder that parses the JSON
 * once more and checks the strings at those fields. Binary requests (Connect, gRPC,
 * gRPC-Web) never reach a text decoder, and JSON requests of other methods are untouched.
 */
import {
  type DescField,
  type DescMessage,
  type DescMethod,
  type JsonReadOptions,
  type JsonWriteOptions,
  ScalarType,
} from "@bufbuild/protobuf";
import type { ConnectRouter, MethodImpl } from "@connectrpc/connect";
import type { UniversalHandlerOptions } from "@connectrpc/connect/protocol";
import { invalidArgument } from "../domain/errors.js";
import { runlaterToConnectError } from "./errors.js";
import { MethodRouter } from "./method-router.js";

/** connect-es's JSON options: it also reads `textDecoder` from them (protocol/serialization.ts). */
export interface JsonOptions extends Partial<JsonReadOptions & JsonWriteOptions> {
  textDecoder?: { decode(input?: Uint8Array): string };
}

/** The fields of a message that are bytes or lead to bytes, by both of their JSON keys. */
type Plan = Map<string, PlannedField>;

interface PlannedField {
  /** The proto name, for error messages (`jobs[0].body`). */
  name: string;
  shape: "single" | "list" | "map";
  /** Undefined: the field (or its elements) is a base64 string; else a message to walk. */
  message?: Plan;
}

const BYTES_VALUE = "google.protobuf.BytesValue";

/** The plan of `desc`, or undefined when no bytes field can be reached from it. */
export function bytesPlan(desc: DescMessage, seen = new Map<DescMessage, Plan>()): Plan | undefined {
  const known = seen.get(desc);
  if (known) return known; // a recursive message: the plan being built (filled in below)
  const plan: Plan = new Map();
  seen.set(desc, plan);
  for (const field of desc.fields) {
    const planned = planField(field, seen);
    if (!planned) continue;
    plan.set(field.name, planned);
    plan.set(field.jsonName, planned);
  }
  return plan.size > 0 ? plan : undefined;
}

function planField(field: DescField, seen: Map<DescMessage, Plan>): PlannedField | undefined {
  const shape = field.fieldKind === "list" ? "list" : field.fieldKind === "map" ? "map" : "single";
  const kind =
    field.fieldKind === "list" ? field.listKind : field.fieldKind === "map" ? field.mapKind : field.fieldKind;
  if (kind === "scalar" && field.scalar === ScalarType.BYTES) return { name: field.name, shape };
  if (kind !== "message" || !field.message) return undefined;
  if (field.message.typeName === BYTES_VALUE) return { name: field.name, shape }; // a plain string in JSON
  const message = bytesPlan(field.message, seen);
  return message ? { name: field.name, shape, message } : undefined;
}

/** Standard or URL-safe alphabet, padding optional (when present, the length is a multiple of 4). */
export function isBase64(text: string): boolean {
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(text)) return false;
  const padded = text.endsWith("=");
  return padded ? text.length % 4 === 0 : text.length % 4 !== 1;
}

function notBase64(path: string, text: string): Error {
  const example = text.length <= 64 ? text : "hello world";
  return runlaterToConnectError(
    invalidArgument(
      path,
      `${path} is not base64: in JSON, bytes fields such as job bodies are base64 (standard or URL-safe ` +
        `alphabet, padding optional), never raw text. Encode the bytes first: the text ${JSON.stringify(example)} ` +
        `is ${JSON.stringify(Buffer.from(example).toString("base64"))} (shell: base64 -w0 < file; ` +
        `JavaScript: Buffer.from(text).toString("base64"); Python: base64.b64encode(data).decode())`,
    ),
  );
}

/** Throws for the first string at a bytes field of `value` that is not base64. */
export function checkBytes(plan: Plan, value: unknown, path = ""): void {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return; // protobuf-es explains
  for (const [key, v] of Object.entries(value)) {
    const field = plan.get(key);
    if (!field || v === null) continue;
    const at = path === "" ? field.name : `${path}.${field.name}`;
    if (field.shape === "list") {
      if (Array.isArray(v)) for (const [i, element] of v.entries()) checkOne(field, element, `${at}[${i}]`);
    } else if (field.shape === "map") {
      if (typeof v === "object" && !Array.isArray(v))
        for (const [k, element] of Object.entries(v)) checkOne(field, element, `${at}[${JSON.stringify(k)}]`);
    } else checkOne(field, v, at);
  }
}

function checkOne(field: PlannedField, value: unknown, path: string): void {
  if (field.message) checkBytes(field.message, value, path);
  else if (typeof value === "string" && !isBase64(value)) throw notBase64(path, value);
}

/** The text decoder for JSON requests of a method whose input has bytes fields. */
function strictDecoder(plan: Plan): NonNullable<JsonOptions["textDecoder"]> {
  const utf8 = new TextDecoder();
  return {
    decode(input) {
      const text = utf8.decode(input);
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        return text; // not JSON: protobuf-es says so, as it always has
      }
      checkBytes(plan, parsed);
      return text;
    },
  };
}

/**
 * A router that registers each method of a service on its own, so that the methods with
 * bytes fields get their strict decoder (connect-es sets JSON options per service or per
 * method, and the decoder must know its method's input). `jsonOptions` are the router's:
 * per-method options replace them as a whole, so they are merged in here.
 */
export class StrictBytesRouter extends MethodRouter {
  constructor(
    inner: ConnectRouter,
    private readonly jsonOptions: JsonOptions = {},
  ) {
    super(inner);
  }

  rpc<M extends DescMethod>(method: M, impl: MethodImpl<M>, options?: Partial<UniversalHandlerOptions>): this {
    const plan = bytesPlan(method.input);
    if (!plan) {
      this.inner.rpc(method, impl, options);
      return this;
    }
    const jsonOptions: JsonOptions = {
      ...this.jsonOptions,
      ...options?.jsonOptions,
      textDecoder: strictDecoder(plan),
    };
    this.inner.rpc(method, impl, { ...options, jsonOptions });
    return this;
  }
}
