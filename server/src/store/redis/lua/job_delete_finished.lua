--[[
  jobDeleteFinished (one shard): retention GC through the finished-by-time zsets, oldest
  first per partition: O(deleted), never O(queue).
  KEYS[1]  <prefix>:{shard}:checks   (routing only)
  ARGV     prefix, queue, succeededBefore, failedBefore, limit, partitions...
  Returns  the number deleted.
]]
--@include keys
--@include transitions
--@include job
local queue, limit = ARGV[2], tonumber(ARGV[5])
local before = { s = ARGV[3], f = ARGV[4] }
local deleted = 0
for i = 6, #ARGV do
  local tag = tagOf(queue, ARGV[i])
  for _, st in ipairs({ "s", "f" }) do
    if deleted >= limit then break end
    local ids = redis.call("ZRANGEBYSCORE", tag .. ":done:" .. st, "-inf", "(" .. before[st], "LIMIT", 0, limit - deleted)
    for _, id in ipairs(ids) do
      local job = loadJob(tag, id)
      if job then removeJob(tag, job) else redis.call("ZREM", tag .. ":done:" .. st, id) end
      deleted = deleted + 1
    end
  end
end
flushCounts()
return deleted
