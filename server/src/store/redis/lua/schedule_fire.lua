--[[
  scheduleFire (the schedule's shard, docs/workflows.md#schedules): a schedule's fire, all or nothing,
  in memory's order (memory/schedules.ts). The stored schedule must be at the revision the
  fire was decided on (else nothing is written). What the fire starts (an instance with the
  queue jobs of its first runs, or a plain queue job) is inserted unless a record with its
  id exists (an earlier try of this fire started it: nothing of it is written); then the
  jobs to cancel are deleted if pending, waiting or buffered (include/cancel.lua); then the
  schedule is written.
  KEYS[1]  <prefix>:{wf}:s:<name>
  ARGV     prefix, now, name, rev (the stored revision expected);
           the new schedule: rev, next_fire_at, data;
           the ids to cancel, joined by spaces;
           what it starts: kind ("" nothing, "i" an instance, "j" a queue job), the
           instance: id, rev, state, workflow, created_at, ended_at, data ("" each for a job
           or nothing);
           then per queue job to insert: id, stored prefix, body (insert.lua): the
           instance's first jobs, or the one plain job
  Returns  "<applied> <existed>": "1 0" applied, "1 1" applied and what it starts existed,
           "0 0" the schedule is at another revision or gone (nothing written).
  Errors   "QUEUE_NOT_FOUND <queue>" when a job's partition is missing (nothing written).
]]
--@include keys
--@include transitions
--@include job_record
--@include ledgers
--@include indexes
--@include sequences
--@include apply
--@include insert
--@include cancel
--@include workflows
--@include schedules
local now, name = tonumber(ARGV[2]), ARGV[3]
local kind, instanceId = ARGV[9], ARGV[10]
local JOBS_FROM = 17
if scheduleRev(name) ~= tonumber(ARGV[4]) then return "0 0" end
local existed = false
if kind == "i" then
  existed = redis.call("EXISTS", instanceKey(instanceId)) == 1
elseif kind == "j" then
  local tag = tagOfId(ARGV[JOBS_FROM])
  existed = tag ~= nil and redis.call("EXISTS", jobKey(tag, ARGV[JOBS_FROM])) == 1
end
if kind ~= "" and not existed then
  local parts, tags = planInsert(JOBS_FROM)
  if not parts then return redis.error_reply("QUEUE_NOT_FOUND " .. tags) end
  insertPlanned(JOBS_FROM, parts, tags)
  if kind == "i" then writeInstance(instanceId, ARGV[11], ARGV[12], ARGV[13], ARGV[14], ARGV[15], ARGV[16]) end
  -- The cancelled jobs' index removals must land after the inserts' queued index writes.
  flushIndexes()
end
cancelJobs(ARGV[8], now)
writeSchedule(name, ARGV[5], ARGV[6], ARGV[7])
flushCounts()
return existed and "1 1" or "1 0"
