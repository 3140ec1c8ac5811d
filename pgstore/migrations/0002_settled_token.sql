-- 0002_settled_token: remember which lease settled an item.
--
-- settled_token is the token of the lease that settled the item (succeeded,
-- retried, dead-lettered or abandoned it), until the item is leased again.
-- A settlement tried again under that token (its reply was lost, or the
-- handler already completed the item in its own transaction with
-- CompleteTx) then reports webhooks.ErrAlreadySettled, not ErrLeaseLost.
--
-- A nullable column without a default changes only the catalog: the table
-- is neither rewritten nor scanned. Items settled before this migration
-- have none, so a settlement of theirs tried again reports ErrLeaseLost, as
-- it did. Instances of the previous version keep working beside upgraded
-- ones: they never read the column.

ALTER TABLE {{schema}}.inbox_items ADD COLUMN settled_token uuid;
