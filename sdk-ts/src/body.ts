/**
 * Job bodies are opaque bytes on the wire. Producers usually have text or a JSON value,
 * so the SDK accepts those and encodes them the one obvious way (UTF-8, JSON.stringify);
 * handlers decode them back with job.text() / job.json().
 */

/** What enqueue accepts as a body: raw bytes, text (UTF-8) or any JSON-encodable value. */
export type JobBody = Uint8Array | string | JsonValue;

/** A value JSON.stringify turns into JSON (objects with toJSON included, via `object`). */
export type JsonValue = null | boolean | number | JsonValue[] | { readonly [key: string]: unknown } | object;

const encoder = new TextEncoder();
// fatal: a handler calling text() on bytes that are not UTF-8 should hear about it
// rather than get replacement characters silently.
const decoder = new TextDecoder("utf-8", { fatal: true });

export function encodeBody(body: JobBody): Uint8Array {
  if (body instanceof Uint8Array) return body;
  if (typeof body === "string") return encoder.encode(body);
  const json = JSON.stringify(body);
  // JSON.stringify returns undefined for undefined, functions and symbols: refuse them
  // here, where the caller can still see which job it was.
  if (json === undefined)
    throw new TypeError(`cannot encode a ${typeof body} as a job body; pass bytes, a string or a JSON value`);
  return encoder.encode(json);
}

export function decodeText(body: Uint8Array): string {
  return decoder.decode(body);
}

export function decodeJson<T>(body: Uint8Array): T {
  return JSON.parse(decodeText(body)) as T;
}
