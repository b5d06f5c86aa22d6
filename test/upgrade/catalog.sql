-- test/upgrade/catalog.sql: a text dump of everything the booking extension
-- defines, with no OIDs and in a fixed order, so that two databases can be
-- compared with diff.  pg_dump cannot do this: it dumps an extension as one
-- CREATE EXTENSION line and none of its members.
--
-- One line per fact: "<kind> <object> <detail>".  Run with psql -AtX.

WITH ext AS (
    SELECT * FROM pg_catalog.pg_extension WHERE extname = 'booking'
), nsp AS (
    SELECT * FROM pg_catalog.pg_namespace WHERE nspname = 'booking'
), members AS (
    -- every object that belongs to the extension
    SELECT d.classid, d.objid, d.objsubid
    FROM pg_catalog.pg_depend d, ext
    WHERE d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass
      AND d.refobjid = ext.oid AND d.deptype = 'e'
), rels AS (
    SELECT c.* FROM pg_catalog.pg_class c, nsp WHERE c.relnamespace = nsp.oid
), procs AS (
    SELECT p.* FROM pg_catalog.pg_proc p, nsp WHERE p.pronamespace = nsp.oid
), types AS (
    SELECT t.* FROM pg_catalog.pg_type t, nsp WHERE t.typnamespace = nsp.oid
), facts(line) AS (
    -- the extension itself
    SELECT 'extension booking relocatable=' || extrelocatable || ' schema=' || extnamespace::pg_catalog.regnamespace
    FROM ext
    UNION ALL
    -- tables and sequences whose contents pg_dump keeps, with their filters
    SELECT 'extension config ' || w.cfg::pg_catalog.regclass::text || ' filter=' || coalesce(w.cond, '<null>')
    FROM ext, LATERAL ROWS FROM (pg_catalog.unnest(ext.extconfig), pg_catalog.unnest(ext.extcondition)) AS w(cfg, cond)
    UNION ALL
    SELECT 'extension member ' || pg_catalog.pg_describe_object(classid, objid, objsubid) FROM members
    UNION ALL
    -- the privileges CREATE EXTENSION / ALTER EXTENSION recorded: pg_dump
    -- compares the current ones with these to decide which GRANTs to dump
    SELECT 'init privs ' || pg_catalog.pg_describe_object(i.classoid, i.objoid, i.objsubid)
           || ' type=' || i.privtype::text || ' privs=' || i.initprivs::text
    FROM pg_catalog.pg_init_privs i
    JOIN members m ON m.classid = i.classoid AND m.objid = i.objoid
    UNION ALL
    -- the schema
    -- an ACL that equals the default (after a REVOKE of what was granted) is the default
    SELECT 'schema booking owner=' || nspowner::pg_catalog.regrole || ' acl='
           || coalesce(nullif(nspacl, pg_catalog.acldefault('n', nspowner))::text, '<default>')
           || ' comment=' || coalesce(pg_catalog.obj_description(nsp.oid, 'pg_namespace'), '<none>')
    FROM nsp
    UNION ALL
    -- types: kind, enum labels in order, composite attributes in order
    SELECT 'type ' || t.oid::pg_catalog.regtype || ' typtype=' || t.typtype::text || ' owner=' || t.typowner::pg_catalog.regrole
           || ' acl=' || coalesce(t.typacl::text, '<default>')
           || ' comment=' || coalesce(pg_catalog.obj_description(t.oid, 'pg_type'), '<none>')
    FROM types t
    WHERE t.typtype <> 'c' OR (SELECT relkind FROM rels WHERE rels.oid = t.typrelid) = 'c'
    UNION ALL
    SELECT 'type ' || e.enumtypid::pg_catalog.regtype || ' labels='
           || pg_catalog.string_agg(e.enumlabel, ',' ORDER BY e.enumsortorder)
    FROM pg_catalog.pg_enum e JOIN types t ON t.oid = e.enumtypid
    GROUP BY e.enumtypid
    UNION ALL
    -- relations: kind, options, ownership, grants, comments
    SELECT 'relation ' || c.relname || ' relkind=' || c.relkind::text || ' persistence=' || c.relpersistence::text
           || ' options=' || coalesce(c.reloptions::text, '<none>')
           || ' rowsecurity=' || c.relrowsecurity || ' replident=' || c.relreplident::text
           || ' owner=' || c.relowner::pg_catalog.regrole
           || ' acl=' || coalesce(c.relacl::text, '<default>')
           || ' am=' || coalesce((SELECT amname FROM pg_catalog.pg_am WHERE oid = c.relam), '<none>')
           || ' comment=' || coalesce(pg_catalog.obj_description(c.oid, 'pg_class'), '<none>')
    FROM rels c
    UNION ALL
    -- columns in their logical order (dropped ones skipped), with type,
    -- nullability, default, collation, identity, generation, grants, comment
    SELECT 'column ' || c.relname || '.' || a.attname
           || ' position=' || pg_catalog.row_number() OVER (PARTITION BY c.oid ORDER BY a.attnum)
           || ' type=' || pg_catalog.format_type(a.atttypid, a.atttypmod)
           || ' notnull=' || a.attnotnull
           || ' default=' || coalesce(pg_catalog.pg_get_expr(ad.adbin, ad.adrelid), '<none>')
           || ' collation=' || coalesce((SELECT collname FROM pg_catalog.pg_collation WHERE oid = a.attcollation), '<none>')
           || ' identity=' || a.attidentity::text || ' generated=' || a.attgenerated::text
           || ' storage=' || a.attstorage::text
           || ' acl=' || coalesce(a.attacl::text, '<default>')
           || ' comment=' || coalesce(pg_catalog.col_description(c.oid, a.attnum), '<none>')
    FROM rels c
    JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
    LEFT JOIN pg_catalog.pg_attrdef ad ON ad.adrelid = c.oid AND ad.adnum = a.attnum
    WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f', 'c')
    UNION ALL
    -- constraints: definition, deferrability, validation, comment
    SELECT 'constraint ' || c.relname || '.' || k.conname || ' type=' || k.contype::text
           || ' def=' || pg_catalog.pg_get_constraintdef(k.oid)
           || ' deferrable=' || k.condeferrable || ' deferred=' || k.condeferred || ' validated=' || k.convalidated
           || ' comment=' || coalesce(pg_catalog.obj_description(k.oid, 'pg_constraint'), '<none>')
    FROM pg_catalog.pg_constraint k JOIN rels c ON c.oid = k.conrelid
    UNION ALL
    SELECT 'constraint type ' || k.contypid::pg_catalog.regtype || '.' || k.conname || ' def=' || pg_catalog.pg_get_constraintdef(k.oid)
    FROM pg_catalog.pg_constraint k JOIN types t ON t.oid = k.contypid
    UNION ALL
    -- indexes, by their full definition
    SELECT 'index ' || i.indexrelid::pg_catalog.regclass || ' ' || pg_catalog.pg_get_indexdef(i.indexrelid)
           || ' primary=' || i.indisprimary || ' unique=' || i.indisunique || ' valid=' || i.indisvalid
    FROM pg_catalog.pg_index i JOIN rels c ON c.oid = i.indrelid
    UNION ALL
    -- sequences: parameters and the column that owns them
    SELECT 'sequence ' || s.seqrelid::pg_catalog.regclass || ' type=' || s.seqtypid::pg_catalog.regtype
           || ' start=' || s.seqstart || ' increment=' || s.seqincrement || ' min=' || s.seqmin
           || ' max=' || s.seqmax || ' cache=' || s.seqcache || ' cycle=' || s.seqcycle
           || ' owned_by=' || coalesce((
                SELECT d.refobjid::pg_catalog.regclass || '.' || a.attname
                FROM pg_catalog.pg_depend d
                JOIN pg_catalog.pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
                WHERE d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass AND d.objid = s.seqrelid
                  AND d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass AND d.deptype = 'a'), '<none>')
    FROM pg_catalog.pg_sequence s JOIN rels c ON c.oid = s.seqrelid
    UNION ALL
    -- triggers, rules and policies (none today; an upgrade must not add stray ones)
    SELECT 'trigger ' || c.relname || '.' || tg.tgname || ' ' || pg_catalog.pg_get_triggerdef(tg.oid)
    FROM pg_catalog.pg_trigger tg JOIN rels c ON c.oid = tg.tgrelid WHERE NOT tg.tgisinternal
    UNION ALL
    SELECT 'rule ' || r.rulename || ' ' || pg_catalog.pg_get_ruledef(r.oid)
    FROM pg_catalog.pg_rewrite r JOIN rels c ON c.oid = r.ev_class
    UNION ALL
    SELECT 'policy ' || c.relname || '.' || p.polname || ' cmd=' || p.polcmd::text || ' permissive=' || p.polpermissive
           || ' using=' || coalesce(pg_catalog.pg_get_expr(p.polqual, p.polrelid), '<none>')
           || ' check=' || coalesce(pg_catalog.pg_get_expr(p.polwithcheck, p.polrelid), '<none>')
    FROM pg_catalog.pg_policy p JOIN rels c ON c.oid = p.polrelid
    UNION ALL
    -- functions: signature with defaults, result, language, C symbol and
    -- library, volatility, strictness, parallel safety, security, settings,
    -- cost, rows, owner, grants, comment
    SELECT 'function ' || p.proname || '(' || pg_catalog.pg_get_function_arguments(p.oid) || ')'
           || ' returns=' || pg_catalog.pg_get_function_result(p.oid)
           || ' kind=' || p.prokind::text
           || ' language=' || (SELECT lanname FROM pg_catalog.pg_language WHERE oid = p.prolang)
           || ' src=' || CASE WHEN p.prolang = (SELECT oid FROM pg_catalog.pg_language WHERE lanname = 'c')
                              THEN p.prosrc ELSE pg_catalog.md5(p.prosrc) END
           || ' bin=' || coalesce(p.probin, '<none>')
           || ' volatile=' || p.provolatile::text || ' strict=' || p.proisstrict || ' parallel=' || p.proparallel::text
           || ' secdef=' || p.prosecdef || ' leakproof=' || p.proleakproof
           || ' config=' || coalesce(p.proconfig::text, '<none>')
           || ' cost=' || p.procost || ' rows=' || p.prorows
           || ' owner=' || p.proowner::pg_catalog.regrole
           || ' acl=' || coalesce(p.proacl::text, '<default>')
           || ' comment=' || coalesce(pg_catalog.obj_description(p.oid, 'pg_proc'), '<none>')
    FROM procs p
)
SELECT line FROM facts ORDER BY line COLLATE "C";
