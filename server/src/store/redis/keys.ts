/**
 * Where things live in Redis: the key layout (mirrored by lua/include/keys.lua, which
 * documents every key).
 *
 * Shard map: stored data (../placement.ts), one hash on shard 0 (placement()) with each
 * queue's shard per partition. Queues created before maps were stored have none and use
 * the formula over the shard count recorded in shardCount(). Shards can be appended to
 * the --store list (shard-check.ts); reordering or removing them is refused.
 * Queue metadata (configs, the list of queues, the maps) lives on shard 0.
 */
import { formulaShard } from "../placement.js";

/** The placement formula (kept under this name for tests and tools). */
export const shardOf = formulaShard;

export class Keys {
  constructor(readonly prefix: string) {}

  /** The hash tag of a partition: every key of the partition shares its slot. */
  tag(queue: string, partition: number): string {
    return `${this.prefix}:{q:${queue}:${partition}}`;
  }

  all(queue: string, partition: number): string {
    return `${this.tag(queue, partition)}:all`;
  }

  buffered(queue: string, partition: number): string {
    return `${this.tag(queue, partition)}:buf`;
  }

  counters(queue: string, partition: number): string {
    return `${this.tag(queue, partition)}:n`;
  }

  /** Shard 0: hash broker id → JSON {url, expiresAt} (the broker registry). */
  /** API tokens (shard 0): token id → JSON record. */
  tokens(): string {
    return `${this.prefix}:{meta}:tokens`;
  }

  brokers(): string {
    return `${this.prefix}:{meta}:brokers`;
  }

  /** Per shard: the lease epoch counter (epochs only grow, even across queue re-creation). */
  epochs(): string {
    return `${this.prefix}:{shard}:epoch`;
  }

  failed(queue: string, partition: number): string {
    return `${this.tag(queue, partition)}:done:f`;
  }

  lease(queue: string, partition: number): string {
    return `${this.tag(queue, partition)}:lease`;
  }

  marker(queue: string, partition: number): string {
    return `${this.tag(queue, partition)}:q`;
  }

  /** Shard 0: hash queue name → created_at. */
  queueCreated(): string {
    return `${this.prefix}:{meta}:created`;
  }

  /** Shard 0: the job layout the data was written in (JOB_LAYOUT of shard-check.ts). */
  layout(): string {
    return `${this.prefix}:{meta}:layout`;
  }

  /** Shard 0: hash queue name → config JSON. */
  queues(): string {
    return `${this.prefix}:{meta}:queues`;
  }

  /** Per shard: the claim checks of every queue's running jobs by due time, for the global claim sweep (lua/include/ledgers.lua). */
  claimChecks(): string {
    return `${this.prefix}:{shard}:checks`;
  }

  /** Shard 0: hash queue name → its placement, shard indexes by partition ("0,1,2"). */
  placement(): string {
    return `${this.prefix}:{meta}:placement`;
  }

  /**
   * Shard 0: the shard count the deployment was created with, set once: queues without a
   * stored placement (created before maps were stored) use the formula over it.
   */
  shardCount(): string {
    return `${this.prefix}:{meta}:shards`;
  }

  /** Shard 0: the number of shards the deployment has now (grows as shards are added; absent = shardCount). */
  shardTotal(): string {
    return `${this.prefix}:{meta}:shards-total`;
  }

  /** Per shard: its index in the --store list. */
  shardIndex(): string {
    return `${this.prefix}:{meta}:shard`;
  }

  /** Shard 0: hash workflow name → its latest version (workflows.ts). */
  workflows(): string {
    return `${this.prefix}:{meta}:workflows`;
  }

  /** Shard 0: hash version → "<created_at> <definition>" of one workflow. */
  workflowVersions(name: string): string {
    return `${this.prefix}:{meta}:workflow:${name}`;
  }

  /** Each shard, for the instances and schedules placed on it: one instance's hash (lua/include/workflows.lua lists the rest). */
  instance(id: string): string {
    return `${this.prefix}:{wf}:i:${id}`;
  }

  /** Each shard, for the instances and schedules placed on it: ended instances by ended_at, for retention. */
  instancesEnded(): string {
    return `${this.prefix}:{wf}:ended`;
  }

  /** Each shard, for the instances and schedules placed on it: the list of every instance (instance_list.lua reads the one its filters name). */
  instanceList(): string {
    return `${this.prefix}:{wf}:list`;
  }

  /** Each shard, for the instances and schedules placed on it: one schedule's hash (lua/include/schedules.lua lists the rest). */
  schedule(name: string): string {
    return `${this.prefix}:{wf}:s:${name}`;
  }

  /** Each shard, for the instances and schedules placed on it: every schedule's name. */
  schedules(): string {
    return `${this.prefix}:{wf}:schedules`;
  }

  /** Each shard, for the instances and schedules placed on it: schedules by next fire time. */
  schedulesDue(): string {
    return `${this.prefix}:{wf}:schedules:due`;
  }

  /** Shard 0, with several shards: hash schedule name → "<shard> <token>", its claim (../schedule-names.ts). */
  scheduleNames(): string {
    return `${this.prefix}:{meta}:schedule-names`;
  }
}
