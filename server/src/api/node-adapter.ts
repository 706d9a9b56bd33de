/**
 * The Node request handler for every Connect route: what connect-node's
 * connectNodeAdapter does (route by path, translate the Node request and response), plus
 * what it has no hook for: every request body is read through the server-wide read budget
 * (read-budget.ts, --max-request-bytes-total).
 *
 * What a call holds, and until when:
 * - a unary call: every byte of its request, from reading it until the call ends (its
 *   parsed request lives as long); a compressed one holds --max-request-bytes (what its
 *   body may expand to) until its handler starts, then its compressed size;
 * - a streaming call: each piece of its request until the next is read (by then the
 *   message it carried has been handled), so a stream open for hours holds nothing
 *   between messages.
 */
import {
  Code,
  ConnectError,
  type ConnectRouter,
  type ConnectRouterOptions,
  createConnectRouter,
  createContextKey,
  createContextValues,
  type Interceptor,
} from "@connectrpc/connect";
import type { UniversalServerRequest } from "@connectrpc/connect/protocol";
import {
  compressionBrotli,
  compressionGzip,
  universalRequestFromNodeRequest,
  universalResponseToNodeResponse,
} from "@connectrpc/connect-node";
import type { Logger } from "pino";
import { servesHere, serveUnary, UnaryRecordingRouter } from "./connect-unary.js";
import type { BudgetHold, ReadBudget } from "./read-budget.js";

export interface NodeAdapterOptions extends ConnectRouterOptions {
  routes(router: ConnectRouter): void;
  /** Bounds the request bytes held at once, over every call; unbounded without. */
  readBudget?: ReadBudget;
  log: Logger;
  /** False: every call through connect-es, also those connect-unary.ts serves (for tests that compare the two). */
  fastUnary?: boolean;
}

type NodeRequest = Parameters<typeof universalRequestFromNodeRequest>[0];
type NodeResponse = Parameters<typeof universalResponseToNodeResponse>[1];

/** The call's share of the read budget, for the interceptor that sees its handler start. */
const holdKey = createContextKey<BudgetHold | undefined>(undefined);

/** A compressed unary call's handler has started: its body is decompressed and parsed. */
const handlerStarted: Interceptor = (next) => (req) => {
  const hold = req.contextValues.get(holdKey);
  if (hold && !req.stream) hold.handlerStarted?.();
  return next(req);
};

export function connectHandler(options: NodeAdapterOptions): (req: NodeRequest, res: NodeResponse) => void {
  const routerOptions = {
    acceptCompression: [compressionGzip, compressionBrotli],
    ...options,
    interceptors: [...(options.interceptors ?? []), handlerStarted],
  };
  const router = new UnaryRecordingRouter(createConnectRouter(routerOptions), routerOptions);
  options.routes(router);
  const routes = new Map(router.handlers.map((h) => [h.requestPath, h]));
  const readMaxBytes = options.readMaxBytes ?? 0xffffffff;

  return (req, res) => {
    const path = req.url?.split("?", 2)[0] ?? "";
    const handler = routes.get(path);
    if (!handler) {
      res.writeHead(404);
      res.end();
      return;
    }
    const hold = options.readBudget?.open();
    const contextValues = createContextValues().set(holdKey, hold);
    // The call is over when its response closes (finished, or the client went away); the
    // promise below may never settle for a response Node does not report as ended.
    if (hold) res.once("close", () => hold.close());
    const unary = router.unary.get(path);
    if (options.fastUnary !== false && unary && servesHere(unary, req.headers, req.method)) {
      const upfront = hold ? declaredLength(req.headers["content-length"], unary.opt.readMaxBytes) : 0;
      const serve = () =>
        serveUnary(unary, { req, res }, hold, upfront, contextValues).catch((reason: unknown) =>
          notWritten(options.log, reason, unary.method.name),
        );
      const wait = hold?.take(upfront);
      if (!wait) return void serve();
      wait.then(serve, () => {}); // the client went away while waiting: nothing to answer
      return;
    }
    const uReq = universalRequestFromNodeRequest(req, res, undefined, contextValues);
    const serve = (r: UniversalServerRequest) =>
      handler(r)
        .then((uRes) => universalResponseToNodeResponse(uRes, res))
        .catch((reason: unknown) => notWritten(options.log, reason, handler.method.name));
    if (!hold) return void serve(uReq);
    const isUnary = handler.method.methodKind === "unary";
    const squeezed = compressed(uReq.header);
    // What a unary call needs is known before it is read: connect-es allocates a declared
    // Content-Length at once, and a compressed body may expand to readMaxBytes. Take it
    // before the call starts, so a call that waits has nothing allocated yet.
    const upfront = !isUnary
      ? 0
      : squeezed
        ? readMaxBytes
        : declaredLength(uReq.header.get("content-length") ?? undefined, readMaxBytes);
    const metered = { ...uReq, body: meter(uReq, hold, { unary: isUnary, squeezed, upfront, readMaxBytes }) };
    const wait = hold.take(upfront, uReq.signal);
    if (!wait) return void serve(metered);
    wait.then(
      () => serve(metered),
      () => {}, // the client went away while waiting: nothing to answer
    );
  };
}

/**
 * A call whose answer could not be written. The handler's own errors are answers already
 * (api/errors.ts): what is left is a client that went away (a worker closing its stream, a
 * load balancer dropping a connection). Not a server fault.
 */
function notWritten(log: Logger, reason: unknown, procedure: string): void {
  if (ConnectError.from(reason).code === Code.Aborted) return;
  log.debug({ err: reason, procedure }, "answer not written: the client went away");
}

/** Whether the request declares a compressed body (Connect unary or streaming, gRPC, gRPC-Web). */
function compressed(header: Headers): boolean {
  return ["content-encoding", "connect-content-encoding", "grpc-encoding"].some((name) => {
    const value = header.get(name);
    return value !== null && value !== "" && value !== "identity";
  });
}

/** A Content-Length the request declares, if it is one connect-es will read (at most readMaxBytes). */
function declaredLength(header: string | string[] | undefined, readMaxBytes: number): number {
  const n = Number(Array.isArray(header) ? header[0] : (header ?? Number.NaN));
  return Number.isSafeInteger(n) && n > 0 && n <= readMaxBytes ? n : 0;
}

/**
 * The request body, each piece counted in `hold` before it is passed on (waiting if need
 * be): a unary call's pieces beyond what it took up front, a streaming call's each until
 * the consumer asks for the next.
 */
function meter(
  uReq: UniversalServerRequest,
  hold: BudgetHold,
  o: { unary: boolean; squeezed: boolean; upfront: number; readMaxBytes: number },
): AsyncIterable<Uint8Array> {
  const source = uReq.body as AsyncIterable<Uint8Array>;
  const read = { n: 0 };
  // Once a compressed unary call's handler starts, its body is decompressed and parsed:
  // it holds its compressed size from then on.
  if (o.unary && o.squeezed) hold.handlerStarted = () => hold.release(hold.held - read.n);
  return (async function* () {
    try {
      for await (const chunk of source) {
        read.n += chunk.byteLength;
        // A compressed piece of a stream may expand to readMaxBytes when decompressed.
        const need = o.unary
          ? Math.max(0, read.n - Math.max(o.upfront, hold.held))
          : o.squeezed
            ? o.readMaxBytes
            : chunk.byteLength;
        const wait = hold.take(need, uReq.signal);
        if (wait)
          await wait.catch(() => {
            throw new ConnectError("the client went away while its request waited to be read", Code.Canceled);
          });
        yield chunk;
        // The consumer asks for more: a streaming call's piece has been handled.
        if (!o.unary) hold.release(need);
      }
    } finally {
      hold.doneReading();
      if (!o.unary) hold.release(hold.held);
    }
  })();
}
