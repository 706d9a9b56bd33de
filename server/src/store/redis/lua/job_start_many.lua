--[[
  jobStartMany: buffered jobs under `epoch` (which must be the lease's) become running per
  their hand-out plan, charging an attempt and entering the shard's running index.
  KEYS[1]  <tag>:lease
  KEYS[2]  <prefix>:{shard}:running
  ARGV     prefix, queue, partition, epoch, now, then per plan: id, claimToken, claimExpiresAt, retryDelayMs
  Returns  { id, ... } of the started jobs (a job not buffered under `epoch` is skipped);
           the broker applies the same handOut to its own copy.
]]
--@include keys
--@include transitions
--@include job
local tag = tagOf(ARGV[2], ARGV[3])
local epoch, now = tonumber(ARGV[4]), tonumber(ARGV[5])
if tonumber(redis.call("HGET", KEYS[1], "epoch")) ~= epoch then return {} end
local NEEDED = fieldsFor("be", "at", "ar") -- the epoch check and handOut read only these
local out = {}
for i = 6, #ARGV, 4 do
  local id = ARGV[i]
  local job = loadJob(tag, id, NEEDED)
  if job and job.st == "b" and job.be == epoch then
    apply(tag, job, handOut(job, ARGV[i + 1], tonumber(ARGV[i + 2]), tonumber(ARGV[i + 3]), now))
    out[#out + 1] = id
  end
end
flushCounts()
return out
