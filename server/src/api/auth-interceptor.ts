/**
 * Authentication and authorization of every call (docs/security.md), when the server runs
 * with auth: a client's bearer token must have the scope the method needs (auth/access.ts)
 * on the queues the request names, checked for every message of a stream; the services
 * between nodes answer only to the cluster secret, never to a client token.
 */
import { timingSafeEqual } from "node:crypto";
import { createContextKey, type Interceptor } from "@connectrpc/connect";
import { ACCESS, NODE_SERVICES } from "../auth/access.js";
import type { TokenVerifier } from "../auth/verifier.js";
import { RunlaterError } from "../domain/errors.js";
import { allowsQueue, type TokenRecord } from "../domain/tokens.js";
import { CLUSTER_SECRET_HEADER, FORWARDED_CALL_HEADER, FORWARDED_HEADER } from "../wire/forwarding.js";

export interface AuthOptions {
  verifier: TokenVerifier;
  /** What nodes of this cluster send each other (ClusterService, forwarded Dequeue); unset: no calls between nodes. */
  clusterSecret?: string;
}

/** The token a call was authenticated with, for handlers that answer about it (TokenService.WhoAmI). */
export const callerToken = createContextKey<TokenRecord | undefined>(undefined);

export function authInterceptor(o: AuthOptions): Interceptor {
  const secret = o.clusterSecret === undefined ? undefined : Buffer.from(o.clusterSecret);
  const fromPeer = (header: Headers): boolean => {
    const sent = header.get(CLUSTER_SECRET_HEADER);
    if (secret === undefined || sent === null) return false;
    const given = Buffer.from(sent);
    return given.length === secret.length && timingSafeEqual(given, secret);
  };
  return (next) => async (req) => {
    const service = req.service.typeName;
    if (NODE_SERVICES.has(service)) {
      if (!fromPeer(req.header))
        throw new RunlaterError(
          "permission_denied",
          "PERMISSION_DENIED",
          `${service} answers only the nodes of this cluster`,
        );
      return next(req);
    }
    if (req.header.has(FORWARDED_HEADER)) {
      if (fromPeer(req.header)) return next(req); // the forwarding node checked the worker's token
      // A node of another cluster, or one given another secret: say so, rather than ask it for a token.
      if (req.header.has(CLUSTER_SECRET_HEADER))
        throw new RunlaterError(
          "unauthenticated",
          "UNAUTHENTICATED",
          "the cluster secret this node was sent does not match its own: every node of a cluster needs the same RUNLATER_CLUSTER_SECRET (or --cluster-secret-file)",
        );
    }
    // Only a node may say a call was forwarded (it changes how the call is counted and released).
    req.header.delete(FORWARDED_HEADER);
    req.header.delete(FORWARDED_CALL_HEADER);
    const procedure = `${service}/${req.method.name}`;
    const access = ACCESS[procedure];
    if (!access)
      throw new RunlaterError("permission_denied", "PERMISSION_DENIED", `${procedure} is not open to tokens`);
    const token = await o.verifier.authenticate(req.header.get("authorization"));
    req.contextValues.set(callerToken, token);
    const scope = access.scope;
    const check = (message: unknown) => {
      if (scope !== "authenticated")
        o.verifier.authorize(token, scope, access.queues(message as Record<string, unknown>), req.method.name);
    };
    if (req.stream) {
      return next({ ...req, message: checked(req.message, check) });
    }
    check(req.message);
    const res = await next(req);
    if (procedure === "runlater.v1.QueueService/ListQueues" && !res.stream)
      return { ...res, message: onlyAllowed(res.message, token) };
    return res;
  };
}

async function* checked<T>(messages: AsyncIterable<T>, check: (message: T) => void): AsyncIterable<T> {
  for await (const message of messages) {
    check(message);
    yield message;
  }
}

/** A ListQueues answer with only the queues `token` may act on. */
function onlyAllowed<M>(message: M, token: TokenRecord): M {
  const queues = (message as { queues?: Array<{ name: string }> }).queues;
  if (!queues || token.queues.length === 0) return message;
  return { ...message, queues: queues.filter((q) => allowsQueue(token, q.name)) };
}
