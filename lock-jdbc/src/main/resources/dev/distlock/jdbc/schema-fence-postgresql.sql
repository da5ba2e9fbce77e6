-- distlock's fence table for PostgreSQL: the highest fencing token each fenced resource has
-- accepted. A fenced write locks its resource's row until its transaction ends, so checks of one
-- resource run one after another, each against the token the last committed write left.
CREATE TABLE IF NOT EXISTS distributed_lock_fence (
    resource VARCHAR(255) NOT NULL PRIMARY KEY,
    token    BIGINT       NOT NULL
);
