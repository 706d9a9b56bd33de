--[[
  jobGetMany (one shard): looks jobs up by id.
  KEYS[1]  <prefix>:{shard}:running   (routing only)
  ARGV     prefix, ids...
  Returns  one per id: the record { id, field, value, ... } or false when absent.
]]
--@include keys
--@include job
local out = {}
for i = 2, #ARGV do
  local tag = tagOfId(ARGV[i])
  local found = tag and redis.call("EXISTS", jobKey(tag, ARGV[i])) == 1
  out[#out + 1] = found and record(tag, ARGV[i]) or false
end
return out
