/**
 * The dashboard's only way to the server: the public runlater.v1 services over Connect
 * (connect-web, the generated clients of sdk-ts/src/gen), the same calls every SDK makes.
 * There is no private backend route.
 *
 * With auth on, `session.token` (set by the login page, kept in sessionStorage so a reload
 * does not sign out, and gone with the tab) is sent as a bearer token on every call.
 */
import { type Client, Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { ClusterInfoService } from "@runlater/sdk/gen/cluster_info_service_pb.js";
import { JobService } from "@runlater/sdk/gen/job_service_pb.js";
import { QueueService } from "@runlater/sdk/gen/queue_service_pb.js";
import { ScheduleService } from "@runlater/sdk/gen/schedule_service_pb.js";
import { TokenService } from "@runlater/sdk/gen/token_service_pb.js";
import { WorkflowService } from "@runlater/sdk/gen/workflow_service_pb.js";

const TOKEN_KEY = "runlater.token";

/** Who the dashboard speaks as: empty when no token was given (a server without auth needs none). */
export const session = {
  token: sessionStorage.getItem(TOKEN_KEY) ?? "",
  /** Keeps `token` in sessionStorage: a reload keeps it; other tabs never see it; it goes when the tab closes. */
  remember(token: string): void {
    session.token = token;
    if (token === "") sessionStorage.removeItem(TOKEN_KEY);
    else sessionStorage.setItem(TOKEN_KEY, token);
  },
  /** Told when a call is refused as unauthenticated (login.tsx then asks for a token). */
  refused: undefined as ((reason: string) => void) | undefined,
};

const withToken: Interceptor = (next) => async (req) => {
  if (session.token !== "") req.header.set("authorization", `Bearer ${session.token}`);
  try {
    return await next(req);
  } catch (err) {
    // One check for every page and button: a token that expired or was revoked signs out.
    if (isUnauthenticated(err)) session.refused?.(describeError(err));
    throw err;
  }
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
  workflows: Client<typeof WorkflowService>;
  schedules: Client<typeof ScheduleService>;
  tokens: Client<typeof TokenService>;
}

export const api: Api = {
  queues: createClient(QueueService, transport),
  jobs: createClient(JobService, transport),
  cluster: createClient(ClusterInfoService, transport),
  workflows: createClient(WorkflowService, transport),
  schedules: createClient(ScheduleService, transport),
  tokens: createClient(TokenService, transport),
};

/** Whether a failed call was refused for want of a (valid) token: the page then asks for one. */
export function isUnauthenticated(err: unknown): boolean {
  return ConnectError.from(err).code === Code.Unauthenticated;
}

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
