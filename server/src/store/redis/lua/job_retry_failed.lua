--[[
  jobRetryFailed over one partition: failed jobs, oldest finished first, get fresh attempts
  and a run_after; one with an ordering key rejoins its key's sequence at the tail (a new
  position from the seq counter), waiting if the key has a job that has not ended.
  Examines at most `budget` entries of the failed zset from `offset` (entries of other
  priorities are skipped, and stay, so the caller adds `skipped`).
  KEYS[1]  <tag>:done:f
  ARGV     prefix, queue, partition, now, priority (0 any), attemptsAllowed, runAfter, offset, budget, want
  Returns  { retried, skipped, done 0/1 }
]]
--@include keys
--@include transitions
--@include job_record
--@include ledgers
--@include indexes
--@include sequences
--@include apply
local tag = tagOf(ARGV[2], ARGV[3])
local now, priority, allowed, runAfter = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local offset, budget, want = tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[10])
local ids = redis.call("ZRANGE", KEYS[1], offset, offset + budget - 1)
local retried, skipped, examined = 0, 0, 0
for _, id in ipairs(ids) do
  if retried >= want then break end
  examined = examined + 1
  local job = loadJob(tag, id)
  if job and (priority == 0 or job.pr == priority) then
    local busy = job.ok ~= "" and joinSequence(tag, job, redis.call("HINCRBY", tag .. ":n", "seq", 1))
    apply(tag, job, retryFailed(allowed, runAfter, now, busy))
    retried = retried + 1
  else
    skipped = skipped + 1
  end
end
local done = (examined == #ids and #ids < budget) and 1 or 0
flushCounts()
return { retried, skipped, done }
