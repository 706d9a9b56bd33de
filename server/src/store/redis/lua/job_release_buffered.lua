--[[
  jobReleaseBuffered: buffered jobs go back to pending, charging nothing. Fenced by the
  job's buffer epoch: the given ids only if buffered under `epoch`; with no ids, every
  job buffered under an epoch below `belowEpoch` (a new owner cleaning up).
  KEYS[1]  <tag>:buf   the partition's buffer batches (ledgers.lua)
  ARGV     prefix, queue, partition, epoch or "", belowEpoch or "", ids...
  Returns  the number released.
]]
--@include keys
--@include transitions
--@include job_record
--@include ledgers
--@include indexes
--@include sequences
--@include apply
local tag = tagOf(ARGV[2], ARGV[3])
local epoch, below = tonumber(ARGV[4]), tonumber(ARGV[5])
local released = 0
if #ARGV > 5 then
  for i = 6, #ARGV do
    local job = loadJob(tag, ARGV[i])
    if job and job.st == "b" and job.be == epoch then
      apply(tag, job, unbuffer())
      released = released + 1
    end
  end
elseif below then
  -- Every buffer batch of an older epoch: its jobs still buffered under it go back.
  local ledger = bufferLedger(tag)
  for _, name in ipairs(redis.call("ZRANGEBYSCORE", ledger.key, "-inf", "(" .. N(below))) do
    ledgerWalk(ledger, name, function(id)
      local job = loadJob(tag, id)
      if job and job.st == "b" and batchName(job) == name then
        apply(tag, job, unbuffer())
        released = released + 1
      end
      return true
    end)
    flushIndexes()
    ledgerDelete(ledger, name) -- (gone already if the count reached 0)
  end
end
flushCounts()
return released
