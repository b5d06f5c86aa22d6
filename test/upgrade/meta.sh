#!/usr/bin/env bash
# test/upgrade/meta.sh: META.json is valid PGXN metadata that agrees with the
# checkout (test/upgrade/check_meta.py), and the validator refuses broken
# variants of it, so that it can fail.
set -u
cd "$(dirname "$0")/../.."
failed=0
tmp=$(mktemp -d /tmp/booking-meta.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

/usr/bin/python3 test/upgrade/check_meta.py META.json || failed=1

# each broken variant must be refused: a jq-free edit with Python
refuse() {
	local description=$1 edit=$2
	/usr/bin/python3 - "$tmp/META.json" "$edit" <<'PY'
import json, sys
meta = json.load(open("META.json"))
exec(sys.argv[2])
json.dump(meta, open(sys.argv[1], "w"))
PY
	if /usr/bin/python3 test/upgrade/check_meta.py "$tmp/META.json" >"$tmp/out" 2>&1; then
		echo "not ok - the validator refuses $description"
		failed=1
	else
		echo "ok - the validator refuses $description"
	fi
}
refuse "a missing name" 'del meta["name"]'
refuse "a missing maintainer" 'del meta["maintainer"]'
refuse "a version that is not SemVer" 'meta["version"] = "0.2"'
refuse "an unknown license name" 'meta["license"] = "PostgreSQL"'
refuse "an unknown top-level key" 'meta["homepage"] = "x"'
refuse "an extension without a file" 'del meta["provides"]["booking"]["file"]'
refuse "an absolute file path" 'meta["provides"]["booking"]["file"] = "/sql/booking.sql"'
refuse "a bad version range" 'meta["prereqs"]["runtime"]["requires"]["PostgreSQL"] = "15"'
refuse "an unknown prereq phase" 'meta["prereqs"]["install"] = {"requires": {"x1": 0}}'
refuse "meta-spec 2.0.0" 'meta["meta-spec"]["version"] = "2.0.0"'
refuse "a version other than the control file's" 'meta["version"] = meta["provides"]["booking"]["version"] = "9.9.9"'
refuse "a missing btree_gist prereq" 'del meta["prereqs"]["runtime"]["requires"]["btree_gist"]'
refuse "a file git ignores (the built script)" 'meta["provides"]["booking"]["file"] = "sql/booking--" + meta["version"] + ".sql"'

exit $failed
