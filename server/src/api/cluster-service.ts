/** ClusterService handlers: node-to-node calls (docs/cluster.md), served by brokers. */
import type { ConnectRouter } from "@connectrpc/connect";
import type { Router } from "../cluster/router.js";
import { ClusterService } from "../gen/runlater/cluster/v1/cluster_pb.js";

export function registerClusterService(router: ConnectRouter, cluster: Router): ConnectRouter {
  return router.service(ClusterService, {
    notify(req) {
      cluster.receive(req);
      return {};
    },
    releaseForwarded(req) {
      cluster.cancelledForwarded(req.callIds);
      return {};
    },
  });
}
