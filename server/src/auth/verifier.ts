/**
 * Checks a call's bearer token (docs/security.md): known, not expired, with the scope the
 * call needs and allowed on the queues it names. Token records are read from the store
 * and cached for CACHE_MS, so a revocation made through any node takes effect on every
 * node within that time; unknown ids are cached too (bounded), so guessing costs the store
 * little.
 */
import type { Clock } from "../domain/clock.js";
import { RunlaterError } from "../domain/errors.js";
import { allowsQueue, parseToken, type Scope, secretMatches, type TokenRecord } from "../domain/tokens.js";
import type { Store } from "../store/store.js";

/** How long a token record (or its absence) is trusted before it is read again. */
export const CACHE_MS = 2000;
/** Entries the cache holds at most; the oldest go first. */
const CACHE_MAX = 10_000;

export class TokenVerifier {
  private readonly cache = new Map<string, { record: TokenRecord | undefined; at: number }>();

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {}

  /** The token a request's Authorization header carries, checked; throws unauthenticated otherwise. */
  async authenticate(authorization: string | null): Promise<TokenRecord> {
    const bearer = /^Bearer\s+(\S+)$/i.exec(authorization ?? "")?.[1];
    if (!bearer) {
      throw unauthenticated(
        "this server needs a token: send `Authorization: Bearer <token>` (RUNLATER_TOKEN in the SDKs and CLI)",
      );
    }
    const parsed = parseToken(bearer);
    const record = parsed && (await this.lookup(parsed.id));
    if (!parsed || !record || !secretMatches(record, parsed.secret))
      throw unauthenticated("the token is not valid (unknown, mistyped or revoked)");
    if (record.expiresAt !== 0 && record.expiresAt <= this.clock.now()) {
      throw unauthenticated(`the token "${record.name}" (${record.id}) has expired`);
    }
    return record;
  }

  /**
   * Throws permission_denied unless `token` has `scope` (a list: one of them) and may act on
   * each of `queues` ("any": it must be unrestricted).
   */
  authorize(token: TokenRecord, scope: Scope | readonly Scope[], queues: string[] | "any", what: string): void {
    const needed: readonly Scope[] = typeof scope === "string" ? [scope] : scope;
    if (!needed.some((s) => token.scopes.includes(s))) {
      throw denied(
        `${what} needs the ${needed.join(" or ")} scope; the token "${token.name}" (${token.id}) has ${token.scopes.join(", ")}`,
      );
    }
    if (queues === "any") {
      if (token.queues.length > 0)
        throw denied(
          `${what} needs a token not limited to queues; "${token.name}" (${token.id}) is limited to ${token.queues.join(", ")}`,
        );
      return;
    }
    const refused = queues.find((q) => !allowsQueue(token, q));
    if (refused !== undefined) {
      throw denied(
        `the token "${token.name}" (${token.id}) may not act on queue "${refused}" (it is limited to ${token.queues.join(", ")})`,
      );
    }
  }

  /** Forgets a token at once on this node (after a revocation made here). */
  forget(id: string): void {
    this.cache.delete(id);
  }

  private async lookup(id: string): Promise<TokenRecord | undefined> {
    const now = this.clock.now();
    const cached = this.cache.get(id);
    if (cached && now - cached.at < CACHE_MS) return cached.record;
    const record = await this.store.tokenGet({ id });
    this.cache.delete(id);
    this.cache.set(id, { record, at: now });
    if (this.cache.size > CACHE_MAX) this.cache.delete(this.cache.keys().next().value!);
    return record;
  }
}

function unauthenticated(message: string): RunlaterError {
  return new RunlaterError("unauthenticated", "UNAUTHENTICATED", message);
}

function denied(message: string): RunlaterError {
  return new RunlaterError("permission_denied", "PERMISSION_DENIED", message);
}
