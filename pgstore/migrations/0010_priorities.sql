-- Job priorities (webhooks.Job.Priority, webhooks.Handler.TypePriorities):
-- a job's priority among its handler's due jobs, given by the Receiver
-- from the event's type when the job is stored, 0 for most. An
-- acquisition with priorities (prioritizedDue in sql.go) reads the due
-- jobs of each priority above 0 from inbox_jobs_priority_idx, one LIMIT
-- each, highest first, then the others from inbox_jobs_due_idx.
--
-- Instances of the previous version (0009) keep working beside it: the
-- column has a default, and they read and write every job as before
-- (theirs have priority 0). Adding the column rewrites nothing, and the
-- check is not validated against the existing rows, which all hold the
-- default; building inbox_jobs_priority_idx reads inbox_jobs once under a
-- SHARE lock: writes to it wait that long.
ALTER TABLE {{schema}}.inbox_jobs
    ADD COLUMN priority integer NOT NULL DEFAULT 0,
    ADD CONSTRAINT inbox_jobs_priority_check CHECK (priority BETWEEN 0 AND 1000) NOT VALID;

-- The due jobs of one priority above 0, by due time: WHERE handler = $h
-- AND priority = $p AND state IN ('pending', 'leased') AND priority <> 0
-- AND next_attempt_at <= now ORDER BY next_attempt_at. Jobs of priority
-- 0 are not in it, so a host that gives none pays nothing for it.
CREATE INDEX inbox_jobs_priority_idx
    ON {{schema}}.inbox_jobs (handler, priority, next_attempt_at)
    WHERE state IN ('pending', 'leased') AND priority <> 0;
