/**
 * The dashboard's only way to the server: the public runlater.v1 services over Connect
 * (connect-web, the generated clients of sdk-ts/src/gen), the same calls every SDK makes.
 * There is no private backend route.
 *
 * Auth plugs in here: `session.token`, once set by a login page, is sent as a bearer
 * token on every call (docs/dashboard.md, "Adding auth").
 */
import { type Client, Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { ClusterInfoService } from "@runlater/sdk/gen/cluster_info_service_pb.js";
import { JobService } from "@runlater/sdk/gen/job_service_pb.js";
import { QueueService } from "@runlater/sdk/gen/queue_service_pb.js";

/** Who the dashboard speaks as. Empty until token login exists (the security issue). */
export const session = { token: "" };

const withToken: Interceptor = (next) => (req) => {
  if (session.token !== "") req.header.set("authorization", `Bearer ${session.token}`);
  return next(req);
};

/** Every call gives up after this long: a stuck call shows an error, never a frozen page. */
const CALL_TIMEOUT_MS = 10_000;

const transport = createConnectTransport({
  // The page is served at /ui/ by the server that serves the API: same origin.
  baseUrl: location.origin,
  interceptors: [withToken],
  defaultTimeoutMs: CALL_TIMEOUT_MS,
});

export interface Api {
  queues: Client<typeof QueueService>;
  jobs: Client<typeof JobService>;
  cluster: Client<typeof ClusterInfoService>;
}

export const api: Api = {
  queues: createClient(QueueService, transport),
  jobs: createClient(JobService, transport),
  cluster: createClient(ClusterInfoService, transport),
};

/** A failed call as a person should read it: what went wrong, and the server's reason. */
export function describeError(err: unknown): string {
  const e = ConnectError.from(err);
  switch (e.code) {
    case Code.Unavailable:
      return `The server could not be reached (${e.rawMessage}).`;
    case Code.DeadlineExceeded:
      return `The server did not answer within ${CALL_TIMEOUT_MS / 1000} s.`;
    case Code.Unauthenticated:
      return `Not signed in: ${e.rawMessage}`;
    case Code.PermissionDenied:
      return `Not allowed: ${e.rawMessage}`;
    case Code.NotFound:
      return `Not found: ${e.rawMessage}`;
    case Code.InvalidArgument:
      return `Refused: ${e.rawMessage}`;
    default:
      return `${Code[e.code] ?? "Error"}: ${e.rawMessage}`;
  }
}
