/**
 * The plain HTTP routes beside the RPCs on the one port: GET /healthz (the process
 * answers), GET /readyz (the store answers: load balancers and Kubernetes probes; neither
 * needs a token nor says anything else) and GET /metrics (Prometheus; with auth, a token
 * with the read scope and no queue patterns, since it names every queue).
 */
import type { Logger } from "pino";
import type { TokenVerifier } from "./auth/verifier.js";
import { RunlaterError } from "./domain/errors.js";
import type { RequestHandler } from "./http/listener.js";
import type { Metrics } from "./metrics.js";

/** How long /readyz waits for the store before it answers 503. */
const READY_TIMEOUT_MS = 2000;

export interface Routes {
  log: Logger;
  metrics?: Metrics;
  verifier?: TokenVerifier;
  /** Resolves true when this node can serve (its store answers). */
  ready(): Promise<boolean>;
}

export function withRoutes(handler: RequestHandler, o: Routes): RequestHandler {
  return (req, res) => {
    if (req.method !== "GET") return handler(req, res);
    const path = req.url?.split("?", 1)[0];
    const reply = (status: number, body: string, contentType = "text/plain; charset=utf-8") => {
      res.statusCode = status;
      res.setHeader("content-type", contentType);
      res.end(body);
    };
    if (path === "/healthz") return reply(200, "ok\n");
    if (path === "/readyz") {
      void withTimeout(o.ready(), READY_TIMEOUT_MS).then((ok) => reply(ok ? 200 : 503, ok ? "ready\n" : "not ready\n"));
      return;
    }
    if (path === "/metrics" && o.metrics) {
      void metricsAnswer(o, req.headers.authorization).then(({ status, body, contentType }) =>
        reply(status, body, contentType),
      );
      return;
    }
    return handler(req, res);
  };
}

async function metricsAnswer(
  o: Routes,
  authorization: string | undefined,
): Promise<{ status: number; body: string; contentType?: string }> {
  try {
    if (o.verifier) {
      const token = await o.verifier.authenticate(authorization ?? null);
      o.verifier.authorize(token, "read", "any", "GET /metrics");
    }
    const { body, contentType } = await o.metrics!.render();
    return { status: 200, body, contentType };
  } catch (err) {
    if (err instanceof RunlaterError)
      return { status: err.code === "unauthenticated" ? 401 : 403, body: `${err.message}\n` };
    o.log.warn({ err }, "could not render metrics");
    return { status: 500, body: "could not render metrics\n" };
  }
}

function withTimeout(check: Promise<boolean>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    check.then(
      (ok) => {
        clearTimeout(timer);
        resolve(ok);
      },
      () => {
        clearTimeout(timer);
        resolve(false);
      },
    );
  });
}
