--[[
  instanceDeleteEnded (each shard in turn): deletes ended instances that ended before a time, oldest
  first, with their list entries (workflows.lua).
  KEYS[1]  <prefix>:{wf}:ended
  ARGV     prefix, ended before (exclusive), limit
  Returns  the number deleted.
]]
--@include keys
--@include workflows
local ids = redis.call("ZRANGEBYSCORE", ENDED, "-inf", "(" .. ARGV[2], "LIMIT", "0", ARGV[3])
for _, id in ipairs(ids) do deleteInstance(id) end
return #ids
