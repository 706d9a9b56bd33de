/** runlater.v1.TokenService: parse, call the token admin, map (docs/security.md). */
import type { ConnectRouter } from "@connectrpc/connect";
import { type Token, TokenService } from "@runlater/sdk/gen/token_service_pb.js";
import type { TokenAdmin } from "../auth/token-admin.js";
import { RunlaterError } from "../domain/errors.js";
import type { Scope, TokenRecord } from "../domain/tokens.js";
import { msToTimestamp, timestampToMs } from "../wire/time.js";
import { callerToken } from "./auth-interceptor.js";

/** `authEnabled`: whether calls pass the auth interceptor, which hands WhoAmI the caller's token. */
export function registerTokenService(router: ConnectRouter, admin: TokenAdmin, authEnabled: boolean): ConnectRouter {
  return router.service(TokenService, {
    async createToken(req) {
      const { token, record } = await admin.create({
        name: req.name,
        scopes: req.scopes as Scope[],
        queues: req.queues,
        expiresAt: timestampToMs(req.expiresAt) ?? 0,
      });
      return { secretToken: token, token: tokenToProto(record) };
    },
    async listTokens() {
      return { tokens: (await admin.list()).map(tokenToProto) };
    },
    async revokeToken(req) {
      return { revoked: await admin.revoke(req.tokenId) };
    },
    whoAmI(_req, ctx) {
      if (!authEnabled) return { authEnabled: false };
      const token = ctx.values.get(callerToken);
      // The interceptor authenticates every call first; without its token, fail closed.
      if (!token) throw new RunlaterError("unauthenticated", "UNAUTHENTICATED", "the call carried no checked token");
      return { authEnabled: true, token: tokenToProto(token) };
    },
  });
}

function tokenToProto(t: TokenRecord): Token {
  return {
    $typeName: "runlater.v1.Token",
    tokenId: t.id,
    name: t.name,
    scopes: t.scopes,
    queues: t.queues,
    createdAt: msToTimestamp(t.createdAt),
    expiresAt: msToTimestamp(t.expiresAt),
  };
}
