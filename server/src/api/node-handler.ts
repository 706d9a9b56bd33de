/**
 * The Node request handler of every runlater API, as connect-node's connectNodeAdapter
 * makes it, except for what happens when an answer cannot be written. connect-node prints
 * such failures with console.error as failed handlers (`[internal] write ECANCELED`), yet
 * they mean the client went away: a worker closed its stream, a load balancer dropped a
 * connection. Here they go to the server's log at debug level, and nothing reaches stderr.
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import { type ConnectRouter, type ConnectRouterOptions, createConnectRouter } from "@connectrpc/connect";
import {
  compressionBrotli,
  compressionGzip,
  universalRequestFromNodeRequest,
  universalResponseToNodeResponse,
} from "@connectrpc/connect-node";
import type { Logger } from "pino";

export type NodeHandler = (
  req: IncomingMessage | Http2ServerRequest,
  res: ServerResponse | Http2ServerResponse,
) => void;

export function createNodeHandler(
  options: ConnectRouterOptions & { routes: (router: ConnectRouter) => void; log: Logger },
): NodeHandler {
  const router = createConnectRouter({ acceptCompression: [compressionGzip, compressionBrotli], ...options });
  options.routes(router);
  const handlers = new Map(router.handlers.map((h) => [h.requestPath, h]));
  return (req, res) => {
    const handler = handlers.get(req.url?.split("?", 2)[0] ?? "");
    if (!handler) {
      res.statusCode = 404;
      res.end();
      return;
    }
    handler(universalRequestFromNodeRequest(req, res, undefined, undefined))
      .then((answer) => universalResponseToNodeResponse(answer, res))
      .catch((err: unknown) => {
        // The handler's own errors are answers already (api/errors.ts); what is left is
        // an answer that could not be written.
        options.log.debug({ err, procedure: handler.method.name }, "answer not written: the client went away");
      });
  };
}
