-- distlock's lock table for MariaDB. Rows are never deleted on release (the fence must keep
-- rising); only rows idle for a long time are swept. Times are the database's, in UTC
-- (UTC_TIMESTAMP(6)); DATETIME(6) stores them without any session time-zone conversion. Keys
-- compare byte for byte (utf8mb4_nopad_bin): the default collation would make `A` and `a` one lock.
CREATE TABLE IF NOT EXISTS distributed_lock (
    name       VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL PRIMARY KEY,
    owner      VARCHAR(64),
    fence      BIGINT       NOT NULL,
    expires_at DATETIME(6)  NOT NULL,
    waited     BOOLEAN      NOT NULL DEFAULT FALSE
) ENGINE = InnoDB;

-- Semaphores: one row per semaphore (its permit count, its fence, whether a waiter marked it),
-- locked while a permit is taken, and one row per held permit with its own owner and lease.
CREATE TABLE IF NOT EXISTS distributed_lock_semaphore (
    name    VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL PRIMARY KEY,
    permits INTEGER      NOT NULL,
    fence   BIGINT       NOT NULL,
    waited  BOOLEAN      NOT NULL DEFAULT FALSE
) ENGINE = InnoDB;
CREATE TABLE IF NOT EXISTS distributed_lock_permit (
    name       VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
    owner      VARCHAR(64)  NOT NULL,
    fence      BIGINT       NOT NULL,
    expires_at DATETIME(6)  NOT NULL,
    PRIMARY KEY (name, owner)
) ENGINE = InnoDB;

-- Countdown latches: one row per latch, and one row per participant counted in a generation.
CREATE TABLE IF NOT EXISTS distributed_lock_latch (
    name                VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL PRIMARY KEY,
    generation          BIGINT       NOT NULL,
    latch_count         INTEGER      NOT NULL,
    remaining           INTEGER      NOT NULL,
    previous_generation BIGINT       NOT NULL,
    previous_opened     BOOLEAN      NOT NULL,
    expires_at          DATETIME(6)  NOT NULL
) ENGINE = InnoDB;
CREATE TABLE IF NOT EXISTS distributed_lock_latch_participant (
    name        VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
    generation  BIGINT       NOT NULL,
    participant VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
    PRIMARY KEY (name, generation, participant)
) ENGINE = InnoDB;

-- Read holds of read-write locks: one row per hold, with its own owner, token and lease. While
-- readers hold a key, its row above has the owner '#readers' and the latest read lease.
CREATE TABLE IF NOT EXISTS distributed_lock_reader (
    name       VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
    owner      VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    fence      BIGINT       NOT NULL,
    expires_at DATETIME(6)  NOT NULL,
    PRIMARY KEY (name, owner)
) ENGINE = InnoDB;
-- Intents of writers waiting behind readers: no new reader comes in while one is live.
CREATE TABLE IF NOT EXISTS distributed_lock_intent (
    name       VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
    waiter     VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    expires_at DATETIME(6)  NOT NULL,
    PRIMARY KEY (name, waiter)
) ENGINE = InnoDB;
