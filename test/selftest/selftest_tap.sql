-- selftest_tap: a pgTAP file that passes; test/selftest/run.sh copies it into
-- a scratch checkout and plants a failing assertion there.
BEGIN;
SELECT plan(2);
SELECT is(1 + 1, 2, 'one and one make two');
SELECT has_schema('booking', 'the extension is installed');
SELECT * FROM finish();
ROLLBACK;
