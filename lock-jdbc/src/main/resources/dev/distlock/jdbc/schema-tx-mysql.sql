-- distlock's table of transaction locks for MySQL 8: one row per key, locked by the holder's
-- transaction (SELECT ... FOR UPDATE) and holding the key's fence, raised in that transaction for
-- its fencing token. Rows are never deleted (the fence must keep rising). Keys compare byte for
-- byte (utf8mb4_0900_bin), as lock keys do.
CREATE TABLE IF NOT EXISTS distributed_lock_tx (
    name  VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_0900_bin NOT NULL PRIMARY KEY,
    fence BIGINT       NOT NULL
) ENGINE = InnoDB;
