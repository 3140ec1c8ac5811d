-- 0004_acquisition_id: name the acquisition that granted a lease.
--
-- acquisition_id is, while an item is leased by an acquisition that had an
-- ID (webhooks.AcquireRequest.ID), that ID, a space and the lease's token;
-- NULL otherwise. A settlement clears it. An acquisition asked for again by
-- its ID (its reply was lost) returns the leases still held under it
-- instead of leasing other items. It finds them through
-- inbox_items_due_idx, where a leased row is due at its lease expiry, so
-- the column needs no index of its own.
--
-- The token in the value ties it to the lease: an instance of the previous
-- version, during a rolling upgrade, leases rows without writing the
-- column, and the value an earlier lease left then names another token and
-- matches nothing.
--
-- A nullable column without a default changes only the catalog: the table
-- is neither rewritten nor scanned. Instances of the previous version keep
-- working beside upgraded ones: they never read the column.

ALTER TABLE {{schema}}.inbox_items ADD COLUMN acquisition_id text;
