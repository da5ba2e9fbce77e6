-- distlock's lock table for PostgreSQL. Rows are never deleted on release (the fence must keep
-- rising); only rows idle for a long time are swept. Times are the database's (clock_timestamp()).
CREATE TABLE IF NOT EXISTS distributed_lock (
    name       VARCHAR(255) NOT NULL PRIMARY KEY,
    owner      VARCHAR(64),
    fence      BIGINT       NOT NULL,
    expires_at TIMESTAMPTZ(6) NOT NULL,
    waited     BOOLEAN      NOT NULL DEFAULT FALSE
);
