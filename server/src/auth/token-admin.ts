/** Making, listing and revoking API tokens (TokenService, `runlater token …`), and the bootstrap token at start. */
import type { Clock } from "../domain/clock.js";
import { invalidArgument, RunlaterError } from "../domain/errors.js";
import { limits } from "../domain/limits.js";
import { newToken, type Scope, type TokenRecord, tokenFromString } from "../domain/tokens.js";
import type { Store } from "../store/store.js";
import type { TokenVerifier } from "./verifier.js";

export class TokenAdmin {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly verifier: TokenVerifier,
  ) {}

  /** A new token: its string (shown once) and its record. */
  async create(p: {
    name: string;
    scopes: Scope[];
    queues: string[];
    expiresAt: number;
  }): Promise<{ token: string; record: TokenRecord }> {
    const made = newToken({ ...p, now: this.clock.now() });
    if ((await this.store.tokenList()).length >= limits.tokensMax) {
      throw new RunlaterError(
        "resource_exhausted",
        "BATCH_TOO_LARGE",
        `the store holds ${limits.tokensMax} tokens already: revoke some first`,
      );
    }
    if (!(await this.store.tokenInsert({ token: made.record })))
      throw new RunlaterError("unavailable", "CONFLICT", "token id taken; retry");
    return made;
  }

  list(): Promise<TokenRecord[]> {
    return this.store.tokenList();
  }

  async revoke(id: string): Promise<boolean> {
    if (id === "")
      throw invalidArgument("token_id", "token_id is empty: name the token to revoke (runlater token list)");
    const revoked = await this.store.tokenDelete({ id });
    this.verifier.forget(id);
    return revoked;
  }
}

/**
 * At start, with auth on: the operator's bootstrap token (RUNLATER_ADMIN_TOKEN or a file)
 * is made an admin token if the store does not have it yet; then at least one token must
 * exist, or nobody could ever call the server.
 */
export async function ensureBootstrapToken(store: Store, clock: Clock, token: string | undefined): Promise<void> {
  if (token !== undefined) {
    const record = tokenFromString(token.trim(), {
      name: "bootstrap admin",
      scopes: ["admin", "read", "enqueue", "work"],
      now: clock.now(),
    });
    const existing = await store.tokenGet({ id: record.id });
    if (!existing) await store.tokenInsert({ token: record });
    else if (existing.secretHash !== record.secretHash) {
      throw new Error(
        `the bootstrap token's id ${record.id} belongs to another token in the store: choose another token`,
      );
    }
  }
  if ((await store.tokenList()).length === 0) {
    throw new Error(
      "auth is on but the store has no token: give a bootstrap admin token (RUNLATER_ADMIN_TOKEN or --admin-token-file; make one with `runlater token generate`)",
    );
  }
}
