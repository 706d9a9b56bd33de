--[[
  instanceInsert and instanceInsertMany (the instances' shard, docs/workflows.md): new
  instances, each with the queue jobs of its first runs, in order, each all or nothing on
  its own: one whose id exists, or one of whose jobs' partitions is missing, writes nothing
  and the next goes on.
  KEYS[1]  <prefix>:{shard}:checks
  ARGV     prefix, then per instance: id, rev, state, workflow, created_at, ended_at, data
           (the instance as workflow-codec.ts encodes it), how many jobs, then per
           job: id, stored prefix, body (insert.lua)
  Returns  one reply per instance, in order: 1 inserted; 0 the id exists; "E <queue>" when
           a job's partition is missing.
]]
--@include keys
--@include transitions
--@include job_record
--@include ledgers
--@include indexes
--@include sequences
--@include insert
--@include workflows
local INSTANCE_FIELDS = 8

-- The instance whose fields start at ARGV[at] and whose jobs are ARGV[from..to].
local function insertInstance(at, from, to)
  local id = ARGV[at]
  if redis.call("EXISTS", instanceKey(id)) == 1 then return 0 end
  local parts, tags = planInsert(from, to)
  if not parts then return "E " .. tags end
  insertPlanned(from, parts, tags, to)
  writeInstance(id, ARGV[at + 1], ARGV[at + 2], ARGV[at + 3], ARGV[at + 4], ARGV[at + 5], ARGV[at + 6])
  return 1
end

local replies = {}
local at = 2
while at <= #ARGV do
  local from = at + INSTANCE_FIELDS
  local to = from + 3 * tonumber(ARGV[at + 7]) - 1
  replies[#replies + 1] = insertInstance(at, from, to)
  at = to + 1
end
flushCounts()
return replies
