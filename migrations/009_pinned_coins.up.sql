-- The coins a Pinned prices login quotes at run start, in the operator's order.
-- They belong to the login: a narrower scope's own login has its own list.
CREATE TABLE pinned_coins (
    connection_id uuid NOT NULL REFERENCES mcp_connections(id) ON DELETE CASCADE,
    position      int NOT NULL,
    coin_id       text NOT NULL,
    symbol        text NOT NULL DEFAULT '',
    name          text NOT NULL DEFAULT '',
    PRIMARY KEY (connection_id, coin_id)
);

-- The prices section quoted at the run's start, kept so every model turn of
-- the run shows the same figures.
ALTER TABLE run_snapshots ADD COLUMN state_prices text NOT NULL DEFAULT '';
