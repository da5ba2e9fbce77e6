-- distlock's lock table for MySQL 8. Rows are never deleted on release (the fence must keep
-- rising); only rows idle for a long time are swept. Times are the database's, in UTC
-- (UTC_TIMESTAMP(6)); DATETIME(6) stores them without any session time-zone conversion. Keys
-- compare byte for byte (utf8mb4_0900_bin): the default collation would make `A` and `a` one lock,
-- and `é` and `e` too.
CREATE TABLE IF NOT EXISTS distributed_lock (
    name       VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_0900_bin NOT NULL PRIMARY KEY,
    owner      VARCHAR(64),
    fence      BIGINT       NOT NULL,
    expires_at DATETIME(6)  NOT NULL,
    waited     BOOLEAN      NOT NULL DEFAULT FALSE
) ENGINE = InnoDB;
