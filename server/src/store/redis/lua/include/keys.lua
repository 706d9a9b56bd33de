--[[
  Key layout, mirrored from ../keys.ts (keep the two in step). ARGV[1] of every script is
  the store's key prefix. A partition's keys share the hash tag {q:<queue>:<partition>},
  so every per-partition write lands in one slot:
    <tag>:q          marker: the partition exists (written by queueCreate)
    <tag>:n          hash: counters p w b r s f (jobs per stored state), seq, maxpr
    <tag>:lease      hash: owner, epoch, exp (epochs come from <prefix>:{shard}:epoch)
    <tag>:j:<id>     string: one job (packed attributes, then the body; see job_record.lua)
    <tag>:p:<prio>   zset: pending jobs of a priority, score run_after, member seq16..id
    <tag>:w          zset: waiting jobs (behind their ordering key's head), score run_after, member id
    <tag>:o:<key>    zset: an ordering key's jobs that have not ended, score position, member id
                     (the first is the head; the key vanishes with its last member)
    <tag>:buf        zset: buffered jobs, score buffer epoch, member id
    <tag>:all        zset: every job, score run_after, member id (scan order)
    <tag>:done:s     list: succeeded jobs for retention, entries "<finished_at> <id> <id> …" in
                     the order they were written (ids may be stale: see listSucceeded in indexes.lua)
    <tag>:done:f     zset: failed jobs, score finished_at, member id
    <tag>:idem       hash: idempotency key -> job id
  on shard 0 (queue metadata, one slot):
    <prefix>:{meta}:queues        hash: queue name -> config JSON
    <prefix>:{meta}:created       hash: queue name -> created_at
    <prefix>:{meta}:placement     hash: queue name -> its partitions' shards, by partition ("0,1,2");
                                  absent for a queue created before placements were stored
                                  (the formula over {meta}:shards then places it, see ../placement.ts)
    <prefix>:{meta}:shards        the shard count the deployment was created with (set once)
    <prefix>:{meta}:shards-total  the shard count now (grows as shards are appended)
    <prefix>:{meta}:brokers       hash: broker id -> JSON {url, expiresAt}
    <prefix>:{meta}:layout        the job layout the data is written in (shard-check.ts JOB_LAYOUT)
  and per shard:
    <prefix>:{meta}:shard      the shard's index in the --store list
    <prefix>:{shard}:epoch     counter: lease epochs, growing across queue re-creation
    <prefix>:{shard}:checks    zset: claim checks, one per hand-out (claim token and expiry) with
                               running jobs left, score the claim expiry, member the check's name
    <prefix>:{shard}:checks:<name>  string: the check's job ids, each followed by a space
    <prefix>:{shard}:checks-n  hash: check name -> how many of its jobs still run under it
]]
local PREFIX = ARGV[1]
local CHECKS = PREFIX .. ":{shard}:checks"
local CHECK_COUNTS = PREFIX .. ":{shard}:checks-n"

local function tagOf(queue, partition)
  return PREFIX .. ":{q:" .. queue .. ":" .. partition .. "}"
end

-- A job id is <queue>.<partition>.<unique> (domain/job-id.ts): it names its partition.
-- A batch's ids mostly share one partition: the last match's "<queue>.<partition>." is
-- tried first (a plain find at the start), so the pattern match and the tag's
-- concatenation happen once per partition rather than once per id.
local lastIdPrefix, lastIdTag
local function tagOfId(id)
  if lastIdPrefix and string.find(id, lastIdPrefix, 1, true) == 1 then return lastIdTag end
  local queue, partition = string.match(id, "^([%w_]+)%.(%d+)%.")
  if not queue then return nil end
  lastIdPrefix, lastIdTag = queue .. "." .. partition .. ".", tagOf(queue, partition)
  return lastIdTag
end

local function jobKey(tag, id)
  return tag .. ":j:" .. id
end

-- Ids joined by single spaces: the hot scripts' arguments (one argument instead of one
-- per job: less for the client to encode and for Redis to parse into ARGV), and the
-- ledgers' and retention list's entries. Returns the id that starts at `at` and where the
-- next one starts; iterate while `at <= #ids` (a trailing space ends the list too).
local function idAt(ids, at)
  local space = string.find(ids, " ", at, true) or #ids + 1
  return string.sub(ids, at, space - 1), space + 1
end
