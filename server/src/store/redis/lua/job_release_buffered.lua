--[[
  jobReleaseBuffered: buffered jobs go back to pending, charging nothing. Fenced by the
  job's buffer epoch: the given ids only if buffered under `epoch`; with no ids, every
  job buffered under an epoch below `belowEpoch` (a new owner cleaning up).
  KEYS[1]  <tag>:buf
  ARGV     prefix, queue, partition, epoch or "", belowEpoch or "", ids...
  Returns  the number released.
]]
--@include keys
--@include transitions
--@include job
local tag = tagOf(ARGV[2], ARGV[3])
local epoch, below = tonumber(ARGV[4]), tonumber(ARGV[5])
local ids = {}
if #ARGV > 5 then
  for i = 6, #ARGV do ids[#ids + 1] = ARGV[i] end
elseif below then
  ids = redis.call("ZRANGEBYSCORE", KEYS[1], "-inf", "(" .. N(below))
end
local released = 0
for _, id in ipairs(ids) do
  local job = loadJob(tag, id)
  if job and job.st == "b" and ((#ARGV > 5 and job.be == epoch) or (below and job.be < below)) then
    apply(tag, job, unbuffer())
    released = released + 1
  end
end
flushCounts()
return released
