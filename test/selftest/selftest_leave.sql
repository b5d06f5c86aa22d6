--
-- selftest_leave: a pg_regress test that passes but leaves a session
-- connected to isolation_regression, so that the isolation stage's
-- pg_isolation_regress cannot drop that database and exits 2 before it runs
-- any test.
--
CREATE DATABASE isolation_regression;
\! psql -X -q -d isolation_regression -c 'SELECT pg_sleep(120)' >/dev/null 2>&1 &
-- wait until the session is there
DO $$
BEGIN
    FOR i IN 1..200 LOOP
        PERFORM pg_stat_clear_snapshot();
        EXIT WHEN EXISTS (SELECT FROM pg_stat_activity WHERE datname = 'isolation_regression');
        PERFORM pg_sleep(0.05);
    END LOOP;
END
$$;
SELECT count(*) AS sessions FROM pg_stat_activity WHERE datname = 'isolation_regression';
