ALTER TABLE run_snapshots DROP COLUMN IF EXISTS state_prices;
DROP TABLE IF EXISTS pinned_coins;
