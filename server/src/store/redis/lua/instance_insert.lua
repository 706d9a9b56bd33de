--[[
  instanceInsert (the instance's shard, docs/workflows.md): a new instance and the queue jobs of its
  first runs, in one step, unless the id exists.
  KEYS[1]  <prefix>:{shard}:checks
  ARGV     prefix, id, rev, state, workflow, created_at, ended_at, data (the instance as
           workflow-codec.ts encodes it), then per job: id, stored prefix, body (insert.lua)
  Returns  1 inserted; 0 the id exists (nothing written).
  Errors   "QUEUE_NOT_FOUND <queue>" when a job's partition is missing (nothing written).
]]
--@include keys
--@include transitions
--@include job_record
--@include ledgers
--@include indexes
--@include sequences
--@include insert
--@include workflows
local id = ARGV[2]
if redis.call("EXISTS", instanceKey(id)) == 1 then return 0 end
local parts, tags = planInsert(9)
if not parts then return redis.error_reply("QUEUE_NOT_FOUND " .. tags) end
insertPlanned(9, parts, tags)
writeInstance(id, ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8])
flushCounts()
return 1
