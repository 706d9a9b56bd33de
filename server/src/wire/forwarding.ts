/** Headers of a Dequeue one node forwards to the broker that owns the partitions (docs/cluster.md). */

/** Set by a node forwarding Dequeue to the broker that owns the partitions. */
export const FORWARDED_HEADER = "runlater-forwarded";
/** The forwarding node's id for the call, named again if it cancels the call (ClusterService.ReleaseForwarded). */
export const FORWARDED_CALL_HEADER = "runlater-forwarded-call";
/** The cluster secret (docs/security.md): sent by a node on every call to another, checked when the server runs with auth. */
export const CLUSTER_SECRET_HEADER = "runlater-cluster-secret";
