--
-- selftest: a pg_regress test that passes; test/selftest/run.sh copies it
-- into a scratch checkout and plants a fault in its expected output there.
--
SELECT 1 + 1 AS two;
