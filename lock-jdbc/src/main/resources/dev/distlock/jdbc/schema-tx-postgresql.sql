-- distlock's table of transaction locks for PostgreSQL: the fence of each key, raised in the
-- holder's transaction for its fencing token. The lock itself is an advisory lock that the
-- transaction holds; rows are never deleted (the fence must keep rising).
CREATE TABLE IF NOT EXISTS distributed_lock_tx (
    name  VARCHAR(255) NOT NULL PRIMARY KEY,
    fence BIGINT       NOT NULL
);
