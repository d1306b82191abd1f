-- rate_limits: the service's rate limit is the merchant's, whichever process or host sends. Every
-- process paying for a merchant paces each request on the merchant's row in one statement (GCRA
-- on the server's clock, so that the hosts' clocks do not matter), and a 429's Retry-After
-- written here holds back every process.
--   merchant:    SHA-256 of a fixed prefix, the service's base URL and the merchant token
--                (ledger/sharedrate.Key): the same merchant on two hosts is one row, and the token
--                is neither stored nor recoverable.
--   tat:         the theoretical arrival time: when the next request would be due at the rate;
--                a request may go up to the burst's tolerance before it.
--   pause_until: no request goes before this (the latest Retry-After's end).
--   granted:     when the last request was let go (for reading; the limiter does not need it).
CREATE TABLE rate_limits (
    merchant    TEXT PRIMARY KEY,
    tat         TIMESTAMPTZ NOT NULL DEFAULT '-infinity',
    pause_until TIMESTAMPTZ NOT NULL DEFAULT '-infinity',
    granted     TIMESTAMPTZ
);
