import { afterAll } from "vitest";
import { exerciseStore, exerciseWorkflowStore, exerciseWorkflowsOnShards } from "../storetest/index.js";
import { cleanupCluster, openClusterStore } from "./redis-cluster-helpers.js";

// The shared suite on a real Redis Cluster (3 masters, 3 replicas): one shard per master
// (the default), so queues' partitions and batches spread over the masters.
exerciseStore("redis cluster", () => openClusterStore());
// Every write script followed by WAIT 1 (each write reached a replica before it is answered).
exerciseStore("redis cluster, wait=1", () => openClusterStore("wait=1"));
// Workflows need one shard: on a cluster, one hash tag (so one master holds them all).
exerciseWorkflowStore("redis cluster, shards=1", () => openClusterStore("shards=1"));
exerciseWorkflowsOnShards("redis cluster", () => openClusterStore());

afterAll(cleanupCluster);
