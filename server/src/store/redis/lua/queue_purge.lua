--[[
  queueDelete's work on one partition, in bounded chunks: the first call removes the
  marker and lease (so no enqueue or claim lands meanwhile); each call deletes up to
  `budget` jobs with their index entries (the shard's running index included); the call
  that finds the partition empty deletes every remaining key of it.
  KEYS[1]  <tag>:all
  ARGV     prefix, queue, partition, budget
  Returns  the number of jobs left (0: the partition is gone).
]]
--@include keys
--@include transitions
--@include job_record
--@include ledgers
--@include indexes
--@include sequences
--@include apply
local tag = tagOf(ARGV[2], ARGV[3])
redis.call("DEL", tag .. ":q", tag .. ":lease")
for _, id in ipairs(redis.call("ZRANGE", KEYS[1], 0, tonumber(ARGV[4]) - 1)) do
  local job = loadJob(tag, id)
  if job then
    removeJob(tag, job, nil) -- every job goes: nothing to promote
  else
    redis.call("ZREM", KEYS[1], id)
  end
end
flushCounts()
local left = redis.call("ZCARD", KEYS[1])
if left == 0 then
  local maxPriority = tonumber(redis.call("HGET", tag .. ":n", "maxpr")) or 0
  -- (Ordering-key sets vanished with their last member.)
  local keys = { tag .. ":n", tag .. ":buf", tag .. ":buf-n", tag .. ":w", tag .. ":done:s", tag .. ":done:f", tag .. ":idem", tag .. ":all" }
  for priority = 1, maxPriority do keys[#keys + 1] = tag .. ":p:" .. priority end
  redis.call("DEL", unpack(keys))
end
return left
