-- Fair acquisitions (webhooks.FlowSupport.Fair): a handler's due jobs
-- leased by tenant in turns.
--
-- Instances of the previous version (0007) keep working beside it: they
-- do not know Fair, and acquire the longest due first. Building
-- inbox_jobs_tenant_due_idx reads inbox_jobs once under a SHARE lock:
-- writes to it wait that long.

-- Where a handler's last Fair acquisition stopped: the tenant it visited
-- last, after which the next one starts. A row is made by the first Fair
-- acquisition; without one, the next starts at the first tenant. Fair
-- acquisitions of a handler take the advisory lock of its Limits first,
-- so they read and move it one after the other.
CREATE TABLE {{schema}}.inbox_fair (
    handler  text COLLATE "C" NOT NULL,
    provider text COLLATE "C" NOT NULL,
    tenant   text COLLATE "C" NOT NULL,
    CONSTRAINT inbox_fair_pkey PRIMARY KEY (handler)
) WITH (fillfactor = 50);

-- A Fair acquisition walks the tenants of a handler that have pending or
-- leased jobs, one index probe each (WHERE handler = $h AND state COLLATE
-- "C" IN ('pending', 'leased') AND (provider, tenant) > $last ORDER BY
-- provider, tenant, next_attempt_at LIMIT 1: the next tenant's longest
-- due job, which says whether it has one due), then reads each tenant's
-- due jobs in due order (provider = $p AND tenant = $t AND next_attempt_at <= now ORDER
-- BY next_attempt_at), from the same index. The predicate names the
-- state's collation, as the walk does: the same rows as
-- inbox_jobs_due_idx's predicate, but a clause the planner cannot prove
-- that one's from, so the walk never goes through inbox_jobs_due_idx
-- (and a sort per step) on a table without statistics, and the other
-- statements, which never name it, never through this index.
CREATE INDEX inbox_jobs_tenant_due_idx
    ON {{schema}}.inbox_jobs (handler, provider, tenant, next_attempt_at)
    WHERE state COLLATE "C" IN ('pending', 'leased');
