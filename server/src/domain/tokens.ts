/**
 * API tokens (docs/security.md): what a token may do (scopes), on which queues (name
 * patterns), until when. A token is `rl_<id>_<secret>`: the id names its record; only a
 * hash of the secret is stored, so a stolen store does not give working tokens.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { invalidArgument } from "./errors.js";
import { limits } from "./limits.js";

export const SCOPES = ["enqueue", "work", "read", "admin"] as const;
export type Scope = (typeof SCOPES)[number];

export interface TokenRecord {
  id: string;
  /** What it is for, as its creator said. */
  name: string;
  /** SHA-256 of the secret, hex. */
  secretHash: string;
  scopes: Scope[];
  /** Queue name patterns (`*` matches any run of name characters); empty: every queue. */
  queues: string[];
  createdAt: number;
  /** 0: never. */
  expiresAt: number;
}

const TOKEN = /^rl_([a-z0-9]{12})_([A-Za-z0-9_-]{43})$/;
const PATTERN = /^[A-Za-z0-9_*]+$/;

/** A new token: the string to hand out once, and the record to store. */
export function newToken(p: { name: string; scopes: Scope[]; queues: string[]; now: number; expiresAt: number }): {
  token: string;
  record: TokenRecord;
} {
  validateToken(p);
  const id = randomBytes(8).toString("hex").slice(0, 12);
  const secret = randomBytes(32).toString("base64url");
  return {
    token: `rl_${id}_${secret}`,
    record: {
      id,
      name: p.name,
      secretHash: hashSecret(secret),
      scopes: [...p.scopes],
      queues: [...p.queues],
      createdAt: p.now,
      expiresAt: p.expiresAt,
    },
  };
}

/** The record of a given token string (the bootstrap token an operator chose). */
export function tokenFromString(token: string, p: { name: string; scopes: Scope[]; now: number }): TokenRecord {
  const parsed = parseToken(token);
  if (!parsed)
    throw invalidArgument(
      "token",
      "a token looks like rl_<12 letters or digits>_<43 base64url characters>; make one with `runlater token create`",
    );
  return {
    id: parsed.id,
    name: p.name,
    secretHash: hashSecret(parsed.secret),
    scopes: [...p.scopes],
    queues: [],
    createdAt: p.now,
    expiresAt: 0,
  };
}

export function parseToken(token: string): { id: string; secret: string } | undefined {
  const match = TOKEN.exec(token);
  return match ? { id: match[1]!, secret: match[2]! } : undefined;
}

/** Whether `secret` is the one `record` was made with (constant time). */
export function secretMatches(record: TokenRecord, secret: string): boolean {
  const a = Buffer.from(record.secretHash, "hex");
  const b = Buffer.from(hashSecret(secret), "hex");
  return a.length === b.length && timingSafeEqual(a, b);
}

function hashSecret(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}

export function validateToken(p: {
  name: string;
  scopes: Scope[];
  queues: string[];
  expiresAt: number;
  now: number;
}): void {
  if (p.name.length === 0 || p.name.length > limits.tokenNameMaxLength) {
    throw invalidArgument("name", `name is 1 to ${limits.tokenNameMaxLength} characters: say what the token is for`);
  }
  if (p.scopes.length === 0) throw invalidArgument("scopes", `give at least one scope of ${SCOPES.join(", ")}`);
  for (const [i, scope] of p.scopes.entries()) {
    if (!SCOPES.includes(scope))
      throw invalidArgument(`scopes[${i}]`, `unknown scope "${scope}": one of ${SCOPES.join(", ")}`);
  }
  if (p.queues.length > limits.tokenQueuePatternsMax) {
    throw invalidArgument("queues", `at most ${limits.tokenQueuePatternsMax} queue patterns`);
  }
  for (const [i, pattern] of p.queues.entries()) {
    if (pattern.length === 0 || pattern.length > limits.queueNameMaxLength || !PATTERN.test(pattern)) {
      throw invalidArgument(
        `queues[${i}]`,
        `queue pattern "${pattern.slice(0, 80)}" may hold letters, digits, _ and * (any run of those), 1 to ${limits.queueNameMaxLength} characters`,
      );
    }
  }
  if (p.expiresAt !== 0 && p.expiresAt <= p.now) throw invalidArgument("expires_at", "expires_at is in the past");
}

/** Whether the token may act on `queue` (no patterns: every queue). */
export function allowsQueue(record: TokenRecord, queue: string): boolean {
  return record.queues.length === 0 || record.queues.some((pattern) => wildcardMatch(pattern, queue));
}

/**
 * `*` matches any run of characters. Greedy with backtracking to the last star only:
 * linear in practice and O(pattern × name) at worst (both at most 64 characters).
 */
export function wildcardMatch(pattern: string, name: string): boolean {
  let p = 0;
  let n = 0;
  let star = -1;
  let mark = 0;
  while (n < name.length) {
    if (p < pattern.length && pattern[p] === name[n]) {
      p++;
      n++;
    } else if (p < pattern.length && pattern[p] === "*") {
      star = p++;
      mark = n;
    } else if (star !== -1) {
      p = star + 1;
      n = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.length && pattern[p] === "*") p++;
  return p === pattern.length;
}
