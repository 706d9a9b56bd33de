/**
 * Turning a scenario step into a driver request ($var substitution, bodies, relative
 * times), and matching a driver's result against the step's `expect`.
 *
 * Bodies: `body` (UTF-8 text), `body_hex`, `body_size: N` (N bytes of a fixed pattern,
 * see sizedBody), `body_json` (a value, sent as its JSON: a scripted handler's action) and
 * the same for `new_body`. Times: `x_in_ms: N` becomes `x_ms: now + N`.
 *
 * Matching is a subset match: every key of an expected mapping must match, extra keys of
 * the actual value are ignored; lists match element by element and must have the same
 * length. Special forms:
 *   "$name"                 bind on first use (the whole value), compare afterwards
 *   {$any: true}            anything present
 *   {$absent: true}         missing or null
 *   {$len: N}               a list or string of length N
 *   {$unordered: [...]}     a list with these elements in any order
 *   {$contains: x}          a list with an element matching x, or a string containing x
 *                           (x a list of strings: containing each; $vars in it are resolved)
 *   {$now_plus_ms: N}       a time (epoch ms) equal to the server's now + N (the clock is manual)
 *   {$gte: x} {$lte: x} {$gt: x} {$lt: x}   numeric comparisons
 *   {$ne: x}                anything that does not match x
 */
import { createHash } from "node:crypto";

export interface Context {
  vars: Map<string, unknown>;
  /** The server's current time (epoch ms); the runner tracks it across advance_clock. */
  now: number;
}

const varName = (v: unknown) => (typeof v === "string" && /^\$[A-Za-z_]\w*$/.test(v) ? v.slice(1) : undefined);

// ---- requests

/**
 * Resolves $vars, bodies (body/body_hex/body_size → body_b64, result → result_b64) and
 * `*_in_ms` times.
 */
export function prepare(value: unknown, ctx: Context, path = ""): unknown {
  const name = varName(value);
  if (name !== undefined) {
    if (!ctx.vars.has(name))
      throw new Error(`${path}: $${name} is not bound yet (bind it in an earlier step's expect)`);
    return ctx.vars.get(name);
  }
  if (Array.isArray(value)) return value.map((v, i) => prepare(v, ctx, `${path}[${i}]`));
  if (typeof value !== "object" || value === null) return value;
  const o = value as Record<string, unknown>;
  if ("$repeat" in o) {
    const one = prepare(o.job, ctx, `${path}.job`);
    return Array.from({ length: o.$repeat as number }, () => one);
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) {
    const p = prepare(v, ctx, `${path}.${k}`);
    if (k.endsWith("_in_ms")) out[`${k.slice(0, -"_in_ms".length)}_ms`] = ctx.now + (p as number);
    else if (k === "body" || k === "new_body") out[`${k}_b64`] = Buffer.from(p as string, "utf8").toString("base64");
    // A workflow output or external event's result payload, written as text.
    else if (k === "result") out.result_b64 = Buffer.from(p as string, "utf8").toString("base64");
    else if (k === "body_hex") out.body_b64 = Buffer.from(p as string, "hex").toString("base64");
    else if (k === "body_json") out.body_b64 = Buffer.from(JSON.stringify(p), "utf8").toString("base64");
    else if (k === "body_size" || k === "new_body_size")
      out[`${k.slice(0, -"_size".length)}_b64`] = sizedBody(p as number).toString("base64");
    else out[k] = p;
  }
  return out;
}

/** A body of `n` bytes: a repeating, recognisable pattern (the same in every language). */
export function sizedBody(n: number): Buffer {
  const pattern = Buffer.from("0123456789abcdefghijklmnopqrstuvwxyz");
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) b[i] = pattern[i % pattern.length]!;
  return b;
}

// ---- results

/**
 * Adds derived fields to every object with a `body_b64`: `body` (the text, if the bytes
 * are valid UTF-8), `body_len` and `body_sha256`, and `result` next to a `result_b64`;
 * drops null values (null = unset).
 */
export function normalize(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalize);
  if (typeof value !== "object" || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (v !== null && v !== undefined) out[k] = normalize(v);
  if (typeof out.body_b64 === "string") {
    const bytes = Buffer.from(out.body_b64, "base64");
    out.body_len = bytes.length;
    out.body_sha256 = createHash("sha256").update(bytes).digest("hex");
    const text = new TextDecoder("utf-8", { fatal: false }).decode(bytes);
    if (Buffer.from(text, "utf8").equals(bytes)) out.body = text;
  }
  // A workflow result payload: its text next to it (results in this suite are text).
  if (typeof out.result_b64 === "string") out.result = Buffer.from(out.result_b64, "base64").toString("utf8");
  return out;
}

/** The sha256 (hex) of the body `body_size: n` produces, for expectations. */
export const sizedBodySha256 = (n: number) => createHash("sha256").update(sizedBody(n)).digest("hex");

/** Matches `actual` against `expected`; binds new $vars into ctx.vars only on success. */
export function match(expected: unknown, actual: unknown, ctx: Context, path = "result"): string[] {
  const trial = new Map(ctx.vars);
  const errors: string[] = [];
  matchInto(expected, actual, { ...ctx, vars: trial }, path, errors);
  if (errors.length === 0) for (const [k, v] of trial) ctx.vars.set(k, v);
  return errors;
}

function matchInto(expected: unknown, actual: unknown, ctx: Context, path: string, errors: string[]): void {
  const name = varName(expected);
  if (name !== undefined) {
    if (!ctx.vars.has(name)) {
      if (actual === undefined) errors.push(`${path}: missing (to bind $${name})`);
      else ctx.vars.set(name, actual);
    } else if (!deepEqual(ctx.vars.get(name), actual)) {
      errors.push(`${path}: expected $${name} = ${show(ctx.vars.get(name))}, got ${show(actual)}`);
    }
    return;
  }
  if (typeof expected === "string" && expected.startsWith("$$")) {
    matchInto(expected.slice(1), actual, ctx, path, errors);
    return;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return void errors.push(`${path}: expected a list, got ${show(actual)}`);
    if (actual.length !== expected.length)
      errors.push(`${path}: expected ${expected.length} items, got ${actual.length}: ${show(actual)}`);
    expected.forEach((e, i) => {
      if (i < actual.length) matchInto(e, actual[i], ctx, `${path}[${i}]`, errors);
    });
    return;
  }
  if (typeof expected === "object" && expected !== null) {
    const e = expected as Record<string, unknown>;
    const keys = Object.keys(e);
    if (keys.length === 1 && keys[0]!.startsWith("$")) {
      special(keys[0]!, e[keys[0]!], actual, ctx, path, errors);
      return;
    }
    if (typeof actual !== "object" || actual === null || Array.isArray(actual))
      return void errors.push(`${path}: expected a mapping, got ${show(actual)}`);
    const a = actual as Record<string, unknown>;
    for (const k of keys) matchInto(e[k], a[k], ctx, `${path}.${k}`, errors);
    return;
  }
  if (expected === null) {
    if (actual !== undefined && actual !== null) errors.push(`${path}: expected unset, got ${show(actual)}`);
    return;
  }
  if (expected === actual) return;
  if (typeof expected === "string" && typeof actual === "string" && (expected.length > 80 || actual.length > 80)) {
    // Long strings: say where they part, not just their first 300 characters.
    let i = 0;
    while (i < expected.length && expected[i] === actual[i]) i++;
    const around = (s: string) => JSON.stringify(s.slice(Math.max(0, i - 20), i + 40));
    errors.push(
      `${path}: strings differ at UTF-16 index ${i} (lengths ${expected.length} and ${actual.length}): expected …${around(expected)}…, got …${around(actual)}…`,
    );
    return;
  }
  errors.push(`${path}: expected ${show(expected)}, got ${show(actual)}`);
}

function special(op: string, arg: unknown, actual: unknown, ctx: Context, path: string, errors: string[]): void {
  const cmp = (ok: (a: number, b: number) => boolean, word: string) => {
    const bound = resolve(arg, ctx);
    if (typeof actual !== "number" || typeof bound !== "number" || !ok(actual, bound))
      errors.push(`${path}: expected ${word} ${show(bound)}, got ${show(actual)}`);
  };
  switch (op) {
    case "$any":
      if (actual === undefined) errors.push(`${path}: missing`);
      return;
    case "$absent":
      if (actual !== undefined && actual !== null) errors.push(`${path}: expected unset, got ${show(actual)}`);
      return;
    case "$len":
      if (!(Array.isArray(actual) || typeof actual === "string") || actual.length !== arg) {
        errors.push(
          `${path}: expected length ${show(arg)}, got ${Array.isArray(actual) || typeof actual === "string" ? actual.length : show(actual)}`,
        );
      }
      return;
    case "$now_plus_ms":
      if (actual !== ctx.now + (arg as number))
        errors.push(
          `${path}: expected now + ${show(arg)} ms (${ctx.now + (arg as number)}), got ${show(actual)}${typeof actual === "number" ? ` (now + ${actual - ctx.now})` : ""}`,
        );
      return;
    case "$gte":
      cmp((a, b) => a >= b, ">=");
      return;
    case "$lte":
      cmp((a, b) => a <= b, "<=");
      return;
    case "$gt":
      cmp((a, b) => a > b, ">");
      return;
    case "$lt":
      cmp((a, b) => a < b, "<");
      return;
    case "$ne": {
      const sub: string[] = [];
      matchInto(arg, actual, { ...ctx, vars: new Map(ctx.vars) }, path, sub);
      if (sub.length === 0) errors.push(`${path}: expected anything but ${show(resolve(arg, ctx))}`);
      return;
    }
    case "$contains": {
      if (typeof actual === "string" && typeof arg === "string") {
        if (!actual.includes(arg)) errors.push(`${path}: expected to contain ${show(arg)}, got ${show(actual)}`);
        return;
      }
      if (Array.isArray(arg) && arg.every((a) => typeof a === "string")) {
        const parts = arg.map((a) => resolve(a, ctx));
        const missing = parts.filter((part) => typeof actual !== "string" || !actual.includes(String(part)));
        if (missing.length > 0) errors.push(`${path}: expected to contain ${show(missing)}, got ${show(actual)}`);
        return;
      }
      if (!Array.isArray(actual)) return void errors.push(`${path}: expected a list, got ${show(actual)}`);
      const hit = actual.some((a) => {
        const sub: string[] = [];
        matchInto(arg, a, { ...ctx, vars: new Map(ctx.vars) }, path, sub);
        return sub.length === 0;
      });
      if (!hit) errors.push(`${path}: no element matches ${show(arg)} in ${show(actual)}`);
      return;
    }
    case "$unordered": {
      if (!Array.isArray(actual) || !Array.isArray(arg))
        return void errors.push(`${path}: expected a list, got ${show(actual)}`);
      if (actual.length !== arg.length)
        return void errors.push(
          `${path}: expected ${arg.length} items in any order, got ${actual.length}: ${show(actual)}`,
        );
      // Backtracking assignment; lists here are short.
      const used = new Array<boolean>(actual.length).fill(false);
      const assign = (i: number, vars: Map<string, unknown>): Map<string, unknown> | undefined => {
        if (i === arg.length) return vars;
        for (let j = 0; j < actual.length; j++) {
          if (used[j]) continue;
          const trial = new Map(vars);
          const sub: string[] = [];
          matchInto(arg[i], actual[j], { ...ctx, vars: trial }, `${path}[?]`, sub);
          if (sub.length > 0) continue;
          used[j] = true;
          const done = assign(i + 1, trial);
          if (done) return done;
          used[j] = false;
        }
        return undefined;
      };
      const done = assign(0, ctx.vars);
      if (!done) errors.push(`${path}: items do not match ${show(arg)} in any order: ${show(actual)}`);
      else for (const [k, v] of done) ctx.vars.set(k, v);
      return;
    }
    default:
      errors.push(`${path}: unknown matcher ${op}`);
  }
}

function resolve(v: unknown, ctx: Context): unknown {
  const name = varName(v);
  return name !== undefined ? ctx.vars.get(name) : v;
}

function deepEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** JSON, cut short: results can hold 512 KiB bodies. */
export function show(v: unknown): string {
  const s = v === undefined ? "(missing)" : JSON.stringify(v);
  return s.length > 3000 ? `${s.slice(0, 3000)}… (${s.length} chars)` : s;
}
