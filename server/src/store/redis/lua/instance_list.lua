--[[
  instanceList (each shard; the store merges the pages): instances newest first (created_at, then id, descending), after
  the cursor, from the list of the filters given (workflows.lua).
  KEYS[1]  <prefix>:{wf}:list   (routing only: the list read follows the filters)
  ARGV     prefix, workflow ("" any), state ("" any), limit, cursor ("" none, else the
           member "<created_at as 16 digits><id>" to continue after)
  Returns  the instances' data, in order.
]]
--@include keys
--@include workflows
local key = listKey(ARGV[2], ARGV[3])
local from = ARGV[5] == "" and "+" or "(" .. ARGV[5]
local out = {}
for _, member in ipairs(redis.call("ZREVRANGEBYLEX", key, from, "-", "LIMIT", "0", ARGV[4])) do
  local data = redis.call("HGET", instanceKey(string.sub(member, 17)), "data")
  if data then out[#out + 1] = data end
end
return out
