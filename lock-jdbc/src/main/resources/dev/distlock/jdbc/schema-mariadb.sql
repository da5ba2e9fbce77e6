-- distlock's lock table for MariaDB. Rows are never deleted on release (the fence must keep
-- rising); only rows idle for a long time are swept. Times are the database's, in UTC
-- (UTC_TIMESTAMP(6)); DATETIME(6) stores them without any session time-zone conversion.
CREATE TABLE IF NOT EXISTS distributed_lock (
    name       VARCHAR(255) NOT NULL PRIMARY KEY,
    owner      VARCHAR(64),
    fence      BIGINT       NOT NULL,
    expires_at DATETIME(6)  NOT NULL,
    waited     BOOLEAN      NOT NULL DEFAULT FALSE
) ENGINE = InnoDB;
