--[[
  jobDeleteMany's write (one partition): deletes the given jobs if they still match the
  state, priority and future filters they were chosen by. Deleting the head of an
  ordering key promotes the key's next job.
  KEYS[1]  <tag>:all
  ARGV     prefix, queue, partition, now, state, priority, future, ids...
  Returns  the number deleted.
]]
--@include keys
--@include transitions
--@include job_record
--@include ledgers
--@include indexes
--@include sequences
--@include apply
--@include job_filter
local tag = tagOf(ARGV[2], ARGV[3])
local now, state, priority, future = tonumber(ARGV[4]), ARGV[5], tonumber(ARGV[6]), ARGV[7]
local deleted = 0
for i = 8, #ARGV do
  local job = loadJob(tag, ARGV[i])
  if job and matches(job, state, priority, future, now) then
    removeJob(tag, job, now)
    deleted = deleted + 1
  end
end
flushCounts()
return deleted
