/**
 * Unary calls in the Connect protocol over the client's own HTTP/2 session, straight on
 * node:http2: connect-es's universal client wraps each call's one-message request and
 * answer in async iterables, races them against a sentinel and ends every call by
 * aborting two AbortControllers (a DOMException and a ConnectError made each time), about
 * three times the CPU of the exchange itself (docs/benchmarks.md). This does the same
 * call without those layers; streams (DequeueStream) still go through connect-es.
 *
 * Same behaviour by construction where it can be: connect-es's request headers, message
 * serialization, response validation, error decoding, header/trailer split, compression
 * and interceptors, and its codes for a failed stream or connection (node-error.ts of
 * connect-node). sdk-ts/test/connect-unary.test.ts sends the same calls both ways.
 */
import type { ClientHttp2Stream, OutgoingHttpHeaders } from "node:http2";
import { constants as h2 } from "node:http2";
import { create, type DescMessage, type DescMethod, type DescMethodUnary } from "@bufbuild/protobuf";
import {
  appendHeaders,
  Code,
  ConnectError,
  type ContextValues,
  createContextValues,
  type Interceptor,
  type Transport,
  type UnaryRequest,
  type UnaryResponse,
} from "@connectrpc/connect";
import { type Compression, createMethodSerializationLookup, createMethodUrl } from "@connectrpc/connect/protocol";
import {
  codeFromHttpStatus,
  errorFromJsonBytes,
  parseContentType,
  requestHeaderWithCompression,
  trailerDemux,
} from "@connectrpc/connect/protocol-connect";
import { compressionBrotli, compressionGzip, type Http2SessionManager } from "@connectrpc/connect-node";

export interface ConnectUnaryOptions {
  baseUrl: string;
  sessionManager: Http2SessionManager;
  /** Binary protobuf (true) or JSON. */
  binary: boolean;
  interceptors: Interceptor[];
  defaultTimeoutMs?: number;
  /** The largest answer read (ANSWER_MAX_BYTES in transport.ts), decompressed or not. */
  readMaxBytes: number;
}

/** As connect-node's transports: answers may come gzip- or brotli-compressed. */
const ACCEPT_COMPRESSION: Compression[] = [compressionGzip, compressionBrotli];
/** connect-node's default for requests: no bound here, the server refuses one that is too large. */
const WRITE_MAX_BYTES = 0xffffffff;

type Serialization = ReturnType<typeof createMethodSerializationLookup<DescMessage, DescMessage>>;

/** `inner` with its unary calls made here (streams stay inner's). */
export function withConnectUnary(inner: Transport, o: ConnectUnaryOptions): Transport {
  const serializations = new WeakMap<DescMethod, Serialization>();
  const serialization = (method: DescMethod) => {
    let s = serializations.get(method);
    if (!s) {
      s = createMethodSerializationLookup(method as DescMethodUnary, undefined, undefined, {
        readMaxBytes: o.readMaxBytes,
        writeMaxBytes: WRITE_MAX_BYTES,
      });
      serializations.set(method, s);
    }
    return s;
  };
  const send = (req: UnaryRequest): Promise<UnaryResponse> => exchange(req, o, serialization(req.method));
  let next = send;
  for (let i = o.interceptors.length - 1; i >= 0; i--) next = o.interceptors[i]!(next as never) as typeof next;

  return {
    stream: inner.stream.bind(inner),
    async unary(method, signal, timeoutMs, header, message, contextValues?: ContextValues) {
      const timeout = timeoutMs === undefined ? o.defaultTimeoutMs : timeoutMs <= 0 ? undefined : timeoutMs;
      const call = callSignal(signal, timeout);
      try {
        return (await next({
          stream: false,
          service: method.parent,
          method,
          requestMethod: "POST",
          url: createMethodUrl(o.baseUrl, method),
          header: requestHeaderWithCompression(
            method.methodKind,
            o.binary,
            timeout,
            header,
            ACCEPT_COMPRESSION,
            null,
            true,
          ),
          contextValues: contextValues ?? createContextValues(),
          message: create(method.input, message),
          signal: call.signal,
        } as UnaryRequest)) as never;
      } catch (e) {
        // As connect-es: a call cut short says why (its deadline, the caller's abort).
        throw call.signal.aborted ? ConnectError.from(call.signal.reason, Code.Canceled) : ConnectError.from(e);
      } finally {
        call.cleanup();
      }
    },
  };
}

/** The call's signal: the caller's, and the deadline's. Not aborted when the call ends well. */
function callSignal(signal: AbortSignal | undefined, timeoutMs: number | undefined) {
  // A signal of its own even then: interceptors may listen on it, and listeners on one
  // signal shared by every call would pile up.
  const controller = new AbortController();
  if (signal === undefined && timeoutMs === undefined) return { signal: controller.signal, cleanup() {} };
  const onAbort = () => controller.abort(signal?.reason);
  let timer: NodeJS.Timeout | undefined;
  if (timeoutMs !== undefined) {
    const timedOut = () => controller.abort(new ConnectError("the operation timed out", Code.DeadlineExceeded));
    if (timeoutMs <= 0) timedOut();
    else timer = setTimeout(timedOut, timeoutMs);
  }
  if (signal?.aborted) onAbort();
  else signal?.addEventListener("abort", onAbort, { once: true });
  return {
    signal: controller.signal,
    cleanup() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    },
  };
}

/** One request and its answer on the session. */
function exchange(req: UnaryRequest, o: ConnectUnaryOptions, serialization: Serialization): Promise<UnaryResponse> {
  const url = new URL(req.url);
  if (url.origin !== o.sessionManager.authority)
    return Promise.reject(
      new ConnectError(
        `cannot make a request to ${url.origin}: the http2 session is connected to ${o.sessionManager.authority}`,
        Code.Internal,
      ),
    );
  const body = serialization.getI(o.binary).serialize(req.message);
  const headers: OutgoingHttpHeaders = {};
  req.header.forEach((value, key) => {
    headers[key] = value;
  });
  const signal = req.signal;
  return new Promise<UnaryResponse>((resolve, reject) => {
    let stream: ClientHttp2Stream | undefined;
    let settled = false;
    const settle = () => {
      settled = true;
      signal.removeEventListener("abort", onAbort);
    };
    const fail = (reason: unknown) => {
      if (settled) return;
      settle();
      const error = reason instanceof ConnectError ? reason : fromNodeReason(reason);
      // An abandoned stream is reset with CANCEL, as connect-node does (gRPC's mapping).
      if (stream && !stream.closed)
        stream.close(error.code === Code.Canceled ? h2.NGHTTP2_CANCEL : h2.NGHTTP2_INTERNAL_ERROR);
      reject(error);
    };
    const onAbort = () => fail(ConnectError.from(signal.reason, Code.Canceled));
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    o.sessionManager.request("POST", url.pathname + url.search, headers, {}).then((s) => {
      stream = s;
      if (settled) {
        s.close(h2.NGHTTP2_CANCEL);
        return;
      }
      let status = 0;
      let responseHeader = new Headers();
      const chunks: Buffer[] = [];
      let length = 0;
      const onResponse = (h: Record<string, string | string[] | number | undefined>) => {
        status = Number(h[":status"]);
        responseHeader = webHeaders(h);
        // As connect-es: an answer that declares more than the bound is refused before it is read.
        const declared = Number.parseInt(responseHeader.get("content-length") ?? "", 10);
        if (declared > o.readMaxBytes) fail(tooLarge(o.readMaxBytes, declared));
      };
      const onData = (chunk: Buffer) => {
        if (settled) return;
        chunks.push(chunk);
        length += chunk.byteLength;
        if (length > o.readMaxBytes) return fail(tooLarge(o.readMaxBytes));
        o.sessionManager.notifyResponseByteRead(s);
      };
      const onEnd = () => {
        if (settled) return;
        // A Uint8Array of its own, as connect-es reads an answer: bytes fields parsed from a
        // Buffer would be Buffers, views on a larger pooled one.
        const bytes = new Uint8Array(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, length));
        answer(status, responseHeader, bytes, req, o, serialization).then((res) => {
          if (settled) return;
          settle();
          resolve(res);
        }, fail);
      };
      const onError = (e: Error) => {
        // The server answered and closed before the whole request was written: its answer counts.
        if (s.writableEnded && (e as { code?: string }).code === "ERR_STREAM_WRITE_AFTER_END") return;
        fail(e);
      };
      const onClose = () => {
        const err = fromResetCode(s.rstCode);
        if (err) fail(err);
        // Node keeps a closed stream reachable for the young-generation collector until a
        // full collection: without its listeners it no longer keeps this call (request,
        // answer, closures) alive with it, which halves what every call leaves for the
        // collector to copy (docs/benchmarks.md, "Reading and writing the jobs by hand").
        s.off("response", onResponse).off("data", onData).off("end", onEnd).off("close", onClose);
        s.off("error", onError).on("error", ignoreLateError);
      };
      s.on("response", onResponse).on("data", onData).on("end", onEnd).on("error", onError).on("close", onClose);
      s.end(body);
    }, fail);
  });
}

/** A closed stream emits no more errors; should Node's ever do, it must not crash the process. */
function ignoreLateError(): void {}

/** connect-es's error for an answer past readMaxBytes (limit-io.ts), with the size when it was declared. */
function tooLarge(readMaxBytes: number, declared?: number): ConnectError {
  const size = declared === undefined ? "" : ` ${declared}`;
  return new ConnectError(
    `message size${size} is larger than configured readMaxBytes ${readMaxBytes}`,
    Code.ResourceExhausted,
  );
}

/** The answer as connect-es reads it: validated, decompressed, an error or a message. */
async function answer(
  status: number,
  header: Headers,
  bytes: Uint8Array,
  req: UnaryRequest,
  o: ConnectUnaryOptions,
  serialization: Serialization,
): Promise<UnaryResponse> {
  const mimeType = header.get("content-type");
  const type = parseContentType(mimeType);
  let unaryError: ConnectError | undefined;
  if (status !== 200) {
    unaryError = new ConnectError(`HTTP ${status}`, codeFromHttpStatus(status), header);
    if (!type || type.binary) throw unaryError;
  } else if (type?.binary !== o.binary || type.stream) {
    throw new ConnectError(
      `unsupported content type ${mimeType}`,
      type === undefined ? Code.Unknown : Code.Internal,
      header,
    );
  }
  const encoding = header.get("content-encoding");
  let compression: Compression | undefined;
  if (encoding !== null && encoding.toLowerCase() !== "identity") {
    compression = ACCEPT_COMPRESSION.find((c) => c.name === encoding);
    if (!compression) throw new ConnectError(`unsupported response encoding "${encoding}"`, Code.Internal, header);
  }
  const [responseHeader, trailer] = trailerDemux(header);
  const declared = header.get("content-length");
  if (declared !== null) {
    const n = Number.parseInt(declared, 10);
    if (Number.isSafeInteger(n) && n >= 0 && n !== bytes.byteLength)
      throw new ConnectError(`protocol error: promised ${n} bytes, received ${bytes.byteLength}`, Code.InvalidArgument);
  }
  const body = compression ? await compression.decompress(bytes, o.readMaxBytes) : bytes;
  if (unaryError) throw errorFromJsonBytes(body, appendHeaders(responseHeader, trailer), unaryError);
  return {
    stream: false,
    service: req.method.parent,
    method: req.method,
    header: responseHeader,
    message: serialization.getO(o.binary).parse(body),
    trailer,
  } as UnaryResponse;
}

function webHeaders(h: Record<string, string | string[] | number | undefined>): Headers {
  const web = new Headers();
  for (const key in h) {
    if (key.startsWith(":")) continue;
    const value = h[key];
    if (Array.isArray(value)) for (const v of value) web.append(key, v);
    else if (value !== undefined) web.append(key, String(value));
  }
  return web;
}

/** connect-node's codes for a stream the server reset (node-error.ts); other codes are no error. */
const RESET_CODES: Record<number, [string, Code]> = {
  [h2.NGHTTP2_PROTOCOL_ERROR]: ["PROTOCOL_ERROR", Code.Internal],
  [h2.NGHTTP2_INTERNAL_ERROR]: ["INTERNAL_ERROR", Code.Internal],
  [h2.NGHTTP2_FLOW_CONTROL_ERROR]: ["FLOW_CONTROL_ERROR", Code.Internal],
  [h2.NGHTTP2_SETTINGS_TIMEOUT]: ["SETTINGS_TIMEOUT", Code.Internal],
  [h2.NGHTTP2_FRAME_SIZE_ERROR]: ["FRAME_SIZE_ERROR", Code.Internal],
  [h2.NGHTTP2_COMPRESSION_ERROR]: ["COMPRESSION_ERROR", Code.Internal],
  [h2.NGHTTP2_CONNECT_ERROR]: ["CONNECT_ERROR", Code.Internal],
  [h2.NGHTTP2_REFUSED_STREAM]: ["REFUSED_STREAM", Code.Unavailable],
  [h2.NGHTTP2_CANCEL]: ["CANCEL", Code.Canceled],
  [h2.NGHTTP2_ENHANCE_YOUR_CALM]: ["ENHANCE_YOUR_CALM", Code.ResourceExhausted],
  [h2.NGHTTP2_INADEQUATE_SECURITY]: ["INADEQUATE_SECURITY", Code.PermissionDenied],
  [h2.NGHTTP2_HTTP_1_1_REQUIRED]: ["HTTP_1_1_REQUIRED", Code.PermissionDenied],
};

function fromResetCode(rstCode: number | undefined): ConnectError | undefined {
  const known = rstCode === undefined ? undefined : RESET_CODES[rstCode];
  if (!known) return undefined;
  return new ConnectError(`http/2 stream closed with error code ${known[0]} (0x${rstCode!.toString(16)})`, known[1]);
}

/** connect-node's code for a Node error on the way (node-error.ts): the cause is kept. */
function fromNodeReason(reason: unknown): ConnectError {
  const codes = new Set<string>();
  for (let e: unknown = reason, depth = 0; e instanceof Error && depth < 10; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string") codes.add(code);
  }
  const has = (...names: string[]) => names.some((n) => codes.has(n));
  const code = has("ERR_STREAM_WRITE_AFTER_END", "ERR_STREAM_DESTROYED", "ERR_HTTP2_INVALID_STREAM", "ECONNRESET")
    ? Code.Aborted
    : has("ETIMEDOUT", "ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED")
      ? Code.Unavailable
      : Code.Internal;
  const error = ConnectError.from(reason, code);
  if (error !== reason) error.cause = reason;
  return error;
}
