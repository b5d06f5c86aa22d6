--
-- selftest_hang: a pg_regress test that hangs far longer than the stage's
-- timeout in test/selftest/run.sh (its expected output is never reached).
--
SELECT pg_sleep(600);
