import { afterAll } from "vitest";
import { exerciseStore, exerciseWorkflowStore, exerciseWorkflowsOnShards } from "../storetest/index.js";
import { cleanupCluster, openClusterStore } from "./redis-cluster-helpers.js";

// The shared suite on a real Redis Cluster (3 masters, 3 replicas): one shard per master
// (the default), so queues' partitions and batches spread over the masters.
exerciseStore("redis cluster", () => openClusterStore());
// Every write script followed by WAIT 1 (each write reached a replica before it is answered).
exerciseStore("redis cluster, wait=1", () => openClusterStore("wait=1"));
// Workflows and schedules on one hash tag (one master holds them all), and on 3 virtual
// shards (instances and schedules placed on each, docs/workflows.md#stores-of-several-shards).
exerciseWorkflowStore("redis cluster, shards=1", () => openClusterStore("shards=1"));
exerciseWorkflowsOnShards("redis cluster, shards=3", () => openClusterStore("shards=3"));

afterAll(cleanupCluster);
