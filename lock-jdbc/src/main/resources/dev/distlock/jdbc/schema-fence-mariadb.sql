-- distlock's fence table for MariaDB: the highest fencing token each fenced resource has
-- accepted. A fenced write locks its resource's row until its transaction ends, so checks of one
-- resource run one after another. Resource names compare byte for byte (utf8mb4_nopad_bin), as
-- lock keys do.
CREATE TABLE IF NOT EXISTS distributed_lock_fence (
    resource VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL PRIMARY KEY,
    token    BIGINT       NOT NULL
) ENGINE = InnoDB;
