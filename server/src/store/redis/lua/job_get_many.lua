--[[
  jobGetMany (one shard): looks jobs up by id.
  KEYS[1]  <prefix>:{shard}:checks   (routing only)
  ARGV     prefix, bodies ("1" with them, "0" without: only each job's head is read), ids...
  Returns  one per id: the record (packRecord) or false when absent.
]]
--@include keys
--@include job_record
local bodies = ARGV[2] == "1"
local out = {}
for i = 3, #ARGV do
  local id = ARGV[i]
  local tag = tagOfId(id)
  local found = false
  if tag and bodies then
    found = record(tag, id) or false
  elseif tag then
    local job = loadJob(tag, id)
    if job then found = recordWithoutBody(job) end
  end
  out[#out + 1] = found
end
return out
