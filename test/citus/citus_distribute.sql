--
-- citus_distribute: run by test/citus/regress.sh only, right after setup:
-- distributes the extension that setup.sql created on a Citus coordinator
-- with two workers, so that the files after it run against the
-- distributed install.
--
SET client_min_messages = warning;
SELECT 'distributed' AS done FROM (SELECT booking.distribute()) s;
RESET client_min_messages;
