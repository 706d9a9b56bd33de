/**
 * The common unary call served straight from the Node request: a POST in the Connect
 * protocol (application/proto or application/json), its body not compressed. That is what
 * every SDK's Enqueue and Ack is, and connect-es spends about four times the work of our
 * own handler on it: a web Headers copy of the request, a URL parsed, async iterables
 * around a one-message body and answer, and two AbortControllers aborted at the end of
 * every call, each making a DOMException with a stack (docs/benchmarks.md, "Where a unary
 * call's time goes").
 *
 * Same answers as connect-es, by construction where it can be: the same message
 * serialization (size limits, JSON options, the strict-bytes decoder), interceptors,
 * request gate, error encoding and status codes, and the same limits in the same words.
 * Everything else (GET, gRPC, gRPC-Web, compressed requests, answers that may be
 * compressed, streams) goes through connect-es as before. server/test/api/connect-unary.test.ts
 * sends the same calls both ways and compares the answers byte for byte.
 *
 * What differs, on purpose: the call's signal is aborted only when the call is cut short
 * (client gone, deadline, shutdown, an error), not at the end of every call; nothing of
 * ours waits for that last abort.
 */
import type { DescMethod, DescMethodUnary, DescService } from "@bufbuild/protobuf";
import { create } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type ConnectRouter,
  type ContextValues,
  type HandlerContext,
  type Interceptor,
  type MethodImpl,
  type UnaryRequest,
  type UnaryResponse,
} from "@connectrpc/connect";
import {
  createMethodSerializationLookup,
  type MethodSerializationLookup,
  mergeNonProtocolHeaders,
  type UniversalHandlerOptions,
  validateUniversalHandlerOptions,
} from "@connectrpc/connect/protocol";
import {
  codeToHttpStatus,
  contentTypeUnaryJson,
  contentTypeUnaryProto,
  errorToJsonBytes,
  parseContentType,
  parseTimeout,
  trailerMux,
} from "@connectrpc/connect/protocol-connect";
import { MethodRouter } from "./method-router.js";
import type { BudgetHold } from "./read-budget.js";

type Options = ReturnType<typeof validateUniversalHandlerOptions>;

/** A unary method as registered: what its handler needs without connect-es's layers. */
export interface UnaryRoute {
  method: DescMethodUnary;
  impl: (req: unknown, ctx: HandlerContext) => unknown;
  opt: Options;
  serialization: MethodSerializationLookup<DescMethodUnary["input"], DescMethodUnary["output"]>;
}

/** The Node request and response of both HTTP versions, as far as this module uses them. */
export interface NodeCall {
  req: {
    method?: string;
    url?: string;
    headers: Record<string, string | string[] | undefined>;
    socket?: unknown;
    on(event: "data", f: (chunk: Buffer) => void): unknown;
    on(event: "end" | "error", f: (err?: Error) => void): unknown;
    pause(): unknown;
    resume(): unknown;
  };
  res: {
    writableEnded: boolean;
    destroyed: boolean;
    writeHead(status: number, headers: Record<string, string>): unknown;
    end(body: Uint8Array): unknown;
    once(event: "close", f: () => void): unknown;
  };
}

/**
 * A router that registers through `inner` as usual and also keeps each unary method's
 * implementation and options, for the path of this module.
 */
export class UnaryRecordingRouter extends MethodRouter {
  readonly unary = new Map<string, UnaryRoute>();

  constructor(
    inner: ConnectRouter,
    private readonly routerOptions: Partial<UniversalHandlerOptions>,
  ) {
    super(inner);
  }

  rpc<M extends DescMethod>(method: M, impl: MethodImpl<M>, options?: Partial<UniversalHandlerOptions>): this {
    this.inner.rpc(method, impl, options);
    if (method.methodKind !== "unary") return this;
    // As connect-es merges them (router options, then the method's), and validates.
    const opt = validateUniversalHandlerOptions({ ...this.routerOptions, ...options });
    this.unary.set(`/${method.parent.typeName}/${method.name}`, {
      method: method as DescMethodUnary,
      impl: impl as UnaryRoute["impl"],
      opt,
      serialization: createMethodSerializationLookup(method, opt.binaryOptions, opt.jsonOptions, opt),
    });
    return this;
  }
}

/** Whether this module serves the call (else connect-es does): see the header comment. */
export function servesHere(
  route: UnaryRoute,
  headers: NodeCall["req"]["headers"],
  method: string | undefined,
): boolean {
  if (method !== "POST" || route.opt.requireConnectProtocolHeader) return false;
  const type = parseContentType(single(headers["content-type"]));
  if (type === undefined || type.stream) return false;
  const encoding = single(headers["content-encoding"]);
  if (encoding !== null && encoding !== "" && encoding !== "identity") return false;
  // An answer that may be compressed: connect-es negotiates it.
  return !(route.opt.compressMinBytes < Number.MAX_SAFE_INTEGER && headers["accept-encoding"] !== undefined);
}

/** Serves one call `servesHere` accepted; `hold` (taken `upfront` bytes) is its share of the read budget. */
export async function serveUnary(
  route: UnaryRoute,
  call: NodeCall,
  hold: BudgetHold | undefined,
  upfront: number,
  contextValues: ContextValues,
): Promise<void> {
  const { req, res } = call;
  const { opt } = route;
  const binary = parseContentType(single(req.headers["content-type"]))!.binary;
  const timeout = parseTimeout(single(req.headers["connect-timeout-ms"]), opt.maxTimeoutMs);
  const ctx = new CallContext(route, call, timeout.timeoutMs, contextValues, binary);
  let status = 200;
  let body: Uint8Array;
  try {
    if (opt.requestGate !== undefined) await opt.requestGate(ctx);
    if (timeout.error) throw timeout.error;
    const bytes = await readBody(req, opt.readMaxBytes, hold, upfront);
    const input = route.serialization.getI(binary).parse(bytes);
    const output = await invoke(route, ctx, input, opt.interceptors);
    body = route.serialization.getO(binary).serialize(output);
  } catch (e) {
    ctx.abort(e);
    const error =
      e instanceof ConnectError ? e : new ConnectError("internal error", Code.Internal, undefined, undefined, e);
    status = codeToHttpStatus(error.code);
    ctx.responseHeader.set("content-type", contentTypeUnaryJson);
    if (!error.isWireError) mergeNonProtocolHeaders(ctx.responseHeader, error.metadata);
    body = errorToJsonBytes(error, opt.jsonOptions);
  } finally {
    ctx.end();
  }
  if (res.writableEnded || res.destroyed) return; // the client went away
  const header: Record<string, string> = {};
  trailerMux(ctx.responseHeader, ctx.responseTrailer).forEach((value, key) => {
    header[key] = value;
  });
  header["content-length"] = String(body.byteLength);
  res.writeHead(status, header);
  res.end(body);
}

/** The interceptors around the implementation, as connect-es's invokeUnaryImplementation does. */
async function invoke(route: UnaryRoute, ctx: CallContext, input: unknown, interceptors: Interceptor[]) {
  const { method } = route;
  const implement = async (req: UnaryRequest): Promise<UnaryResponse> => {
    const implCtx: HandlerContext = {
      method: ctx.method,
      service: req.service,
      requestMethod: ctx.requestMethod,
      protocolName: ctx.protocolName,
      url: ctx.url,
      timeoutMs: ctx.timeoutMs,
      requestHeader: req.header,
      responseHeader: ctx.responseHeader,
      responseTrailer: ctx.responseTrailer,
      signal: req.signal,
      values: req.contextValues,
    };
    return {
      stream: false,
      method,
      service: method.parent,
      message: create(method.output, (await route.impl(req.message, implCtx)) as Record<string, unknown>),
      header: ctx.responseHeader,
      trailer: ctx.responseTrailer,
    } as UnaryResponse;
  };
  let next = implement as (req: UnaryRequest) => Promise<UnaryResponse>;
  for (let i = interceptors.length - 1; i >= 0; i--) next = interceptors[i]!(next as never) as typeof next;
  const res = await next({
    stream: false,
    message: input,
    method,
    requestMethod: ctx.requestMethod,
    url: ctx.url,
    signal: ctx.signal,
    header: ctx.requestHeader,
    service: method.parent,
    contextValues: ctx.values,
  } as UnaryRequest);
  copyHeaders(res.header, ctx.responseHeader);
  copyHeaders(res.trailer, ctx.responseTrailer);
  return res.message;
}

function copyHeaders(from: Headers, to: Headers): void {
  if (from === to) return;
  for (const key of [...to.keys()]) to.delete(key);
  from.forEach((value, key) => {
    to.set(key, value);
  });
}

/**
 * The call's HandlerContext. Its signal aborts when the call is cut short: the client goes
 * away, the deadline passes, the server shuts down, or the call fails (with its error, for
 * the request gate).
 */
class CallContext implements HandlerContext {
  readonly service: DescService;
  readonly method: DescMethod;
  readonly requestMethod = "POST";
  readonly protocolName = "connect";
  readonly url: string;
  readonly values: ContextValues;
  readonly requestHeader: Headers;
  readonly responseHeader: Headers;
  readonly responseTrailer = new Headers();
  readonly timeoutMs: () => number | undefined;
  private readonly controller = new AbortController();
  private readonly timer?: NodeJS.Timeout;
  private readonly shutdown?: AbortSignal;
  private readonly onShutdown?: () => void;
  private ended = false;

  constructor(
    route: UnaryRoute,
    call: NodeCall,
    timeoutMs: number | undefined,
    values: ContextValues,
    binary: boolean,
  ) {
    this.method = route.method;
    this.service = route.method.parent;
    this.values = values;
    this.url = requestUrl(call.req);
    this.requestHeader = webHeaders(call.req.headers);
    this.responseHeader = new Headers({ "content-type": binary ? contentTypeUnaryProto : contentTypeUnaryJson });
    if (timeoutMs !== undefined) {
      const deadline = Date.now() + timeoutMs;
      this.timeoutMs = () => deadline - Date.now();
      const timedOut = () => this.abort(new ConnectError("the operation timed out", Code.DeadlineExceeded));
      if (timeoutMs <= 0) timedOut();
      else this.timer = setTimeout(timedOut, timeoutMs);
    } else this.timeoutMs = () => undefined;
    const shutdown = route.opt.shutdownSignal;
    if (shutdown) {
      this.onShutdown = () => this.abort(shutdown.reason);
      if (shutdown.aborted) this.onShutdown();
      else {
        this.shutdown = shutdown;
        shutdown.addEventListener("abort", this.onShutdown, { once: true });
      }
    }
    call.res.once("close", () => {
      if (!this.ended) this.abort(new ConnectError("the client went away", Code.Canceled));
    });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  abort(reason: unknown): void {
    if (!this.controller.signal.aborted) this.controller.abort(reason);
  }

  /** The answer is ready: nothing aborts the call any more. */
  end(): void {
    this.ended = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.shutdown && this.onShutdown) this.shutdown.removeEventListener("abort", this.onShutdown);
  }
}

/**
 * The request body: at most `readMaxBytes`, and exactly a declared Content-Length, with
 * connect-es's errors; each piece past the `upfront` bytes taken from the read budget
 * first (the request waits, paused, while it cannot be).
 */
function readBody(
  req: NodeCall["req"],
  readMaxBytes: number,
  hold: BudgetHold | undefined,
  upfront: number,
): Promise<Uint8Array> {
  const declared = single(req.headers["content-length"]);
  const hint = declared === null ? Number.NaN : Number.parseInt(declared, 10);
  const known = Number.isSafeInteger(hint) && hint >= 0;
  if (known && hint > readMaxBytes)
    return Promise.reject(
      new ConnectError(
        `message size ${hint} is larger than configured readMaxBytes ${readMaxBytes}`,
        Code.ResourceExhausted,
      ),
    );
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let count = 0;
    let failed = false;
    const fail = (err: unknown) => {
      if (failed) return;
      failed = true;
      hold?.doneReading();
      reject(err);
    };
    req.on("data", (chunk: Buffer) => {
      if (failed) return;
      count += chunk.byteLength;
      if (known && count > hint)
        return fail(
          new ConnectError(`protocol error: promised ${hint} bytes, received ${count}`, Code.InvalidArgument),
        );
      if (!known && count > readMaxBytes)
        return fail(
          new ConnectError(
            `message size is larger than configured readMaxBytes ${readMaxBytes}`,
            Code.ResourceExhausted,
          ),
        );
      chunks.push(chunk);
      if (!hold) return;
      const wait = hold.take(Math.max(0, count - Math.max(upfront, hold.held)));
      if (!wait) return;
      req.pause();
      wait.then(
        () => req.resume(),
        () => fail(new ConnectError("the client went away while its request waited to be read", Code.Canceled)),
      );
    });
    req.on("error", (err) => fail(err));
    req.on("end", () => {
      if (failed) return;
      hold?.doneReading();
      if (known && count < hint)
        return fail(
          new ConnectError(`protocol error: promised ${hint} bytes, received ${count}`, Code.InvalidArgument),
        );
      // A Uint8Array of its own, as connect-es reads a body: a Buffer may be a view on a larger
      // pooled one that every job body parsed from it would keep alive, and bytes fields
      // parsed from a Buffer would be Buffers.
      resolve(new Uint8Array(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, count)));
    });
  });
}

/** The request's URL, as connect-es gives it to handlers. */
function requestUrl(req: NodeCall["req"]): string {
  const socket = req.socket as { encrypted?: boolean } | undefined;
  const authority = single(req.headers[":authority"]) ?? single(req.headers.host) ?? "";
  return `${socket?.encrypted ? "https" : "http"}://${authority}${req.url ?? ""}`;
}

/** The request's headers without HTTP/2's pseudo-headers, as connect-es gives them. */
function webHeaders(headers: NodeCall["req"]["headers"]): Headers {
  const web = new Headers();
  for (const key in headers) {
    if (key.startsWith(":")) continue;
    const value = headers[key];
    if (Array.isArray(value)) for (const v of value) web.append(key, v);
    else if (value !== undefined) web.append(key, value);
  }
  return web;
}

function single(value: string | string[] | undefined): string | null {
  return value === undefined ? null : Array.isArray(value) ? (value[0] ?? null) : value;
}
