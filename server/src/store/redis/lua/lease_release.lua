--[[
  leaseRelease: gives a lease up if `owner` still holds it at `epoch`. The next owner's
  epoch comes from the shard's counter, so it is higher whatever happens to this key.
  KEYS[1]  <tag>:lease
  ARGV     prefix, owner, epoch
  Returns  1 if released, 0 otherwise.
]]
local current = redis.call("HMGET", KEYS[1], "owner", "epoch")
if current[1] ~= ARGV[2] or current[2] ~= ARGV[3] then return 0 end
redis.call("DEL", KEYS[1])
return 1
