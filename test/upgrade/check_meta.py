#!/usr/bin/python3
"""Validates META.json against the PGXN Meta Spec 1.0 and against this checkout.

Usage: check_meta.py [META.json]   (from the top of the checkout)

The spec rules checked are those of the PGXN Meta Spec v1 (the keys, their
types, required keys, Terms, SemVer versions, version ranges, licenses, paths,
prereq phases and relationships, resources, tags, no_index, release_status;
custom keys must start with x_ or X_). There is no network validator here, so
this is the check. On top of the spec, the metadata must agree with the
checkout: the version is booking.control's default_version, the files it names
exist and are not ignored by git, and the runtime prereqs cover the control
file's requires.

Prints one "ok - ..." / "not ok - ..." line per check; exits 1 if any failed.
Standard library only.
"""

import json
import os
import re
import subprocess
import sys

SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$")
RANGE_OP = re.compile(r"^(?:(?:[=!]=|[<>]=?)\s*)?(.+)$")
CUSTOM = re.compile(r"^[xX]_.")
URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:[^\s]+$")
EMAIL = re.compile(r"^[^@\s]+@[^@\s]+$")
LICENSES = {
    "agpl_3", "apache_1_1", "apache_2_0", "artistic_1", "artistic_2", "bsd", "freebsd",
    "gfdl_1_2", "gfdl_1_3", "gpl_1", "gpl_2", "gpl_3", "lgpl_2_1", "lgpl_3_0", "mit",
    "mozilla_1_0", "mozilla_1_1", "openssl", "perl_5", "postgresql", "qpl_1_0", "ssleay",
    "sun", "zlib", "open_source", "restricted", "unrestricted", "unknown",
}
PHASES = {"configure", "build", "test", "runtime", "develop"}
RELATIONSHIPS = {"requires", "recommends", "suggests", "conflicts"}

errors = []


def err(where, message):
    errors.append(f"{where}: {message}")


def is_str(v, min_len=1):
    return isinstance(v, str) and len(v) >= min_len


def is_term(v):
    # at least two characters; no slash, backslash, whitespace or control character
    return is_str(v, 2) and not any(c in "/\\" or c.isspace() or ord(c) < 32 or ord(c) == 127 for c in v)


def is_tag(v):
    return is_str(v, 2) and len(v) <= 255 and not any(c in "/\\" or ord(c) < 32 or ord(c) == 127 for c in v)


def is_path(v):
    # a relative path in Unix conventions
    return (is_str(v, 2) and not v.startswith("/") and "\\" not in v
            and ".." not in v.split("/") and not re.match(r"^[A-Za-z]:", v))


def is_version_range(v):
    if v == 0 or v == "0":
        return True
    if not isinstance(v, str):
        return False
    for part in v.split(","):
        m = RANGE_OP.match(part.strip())
        if not m or not (SEMVER.match(m.group(1).strip()) or m.group(1).strip() == "0"):
            return False
    return True


def check_keys(where, obj, allowed, required=()):
    if not isinstance(obj, dict):
        err(where, "must be an object")
        return False
    for key in required:
        if key not in obj:
            err(where, f"required key {key!r} is missing")
    for key in obj:
        if key not in allowed and not CUSTOM.match(key):
            err(where, f"unknown key {key!r} (custom keys start with x_)")
    return True


def validate(meta):
    top = {"name", "version", "abstract", "maintainer", "license", "provides", "meta-spec",
           "description", "generated_by", "tags", "no_index", "prereqs", "release_status", "resources"}
    if not check_keys("META.json", meta, top,
                      ("name", "version", "abstract", "maintainer", "license", "provides", "meta-spec")):
        return
    if "name" in meta and not is_term(meta["name"]):
        err("name", "must be a Term (2+ characters, no slash, backslash, space or control character)")
    if "version" in meta and not (isinstance(meta["version"], str) and SEMVER.match(meta["version"])):
        err("version", f"{meta['version']!r} is not a SemVer")
    for key in ("abstract", "description", "generated_by"):
        if key in meta and not is_str(meta[key]):
            err(key, "must be a non-empty string")

    m = meta.get("maintainer")
    if "maintainer" in meta and not (is_str(m) or (isinstance(m, list) and m and all(is_str(x) for x in m))):
        err("maintainer", "must be a non-empty string or a non-empty list of them")

    lic = meta.get("license")
    if "license" in meta:
        if isinstance(lic, str):
            if lic not in LICENSES:
                err("license", f"{lic!r} is not a known license name")
        elif isinstance(lic, list):
            if not lic or any(x not in LICENSES for x in lic):
                err("license", "must list one or more known license names")
        elif isinstance(lic, dict):
            if not lic or any(not (isinstance(u, str) and URI.match(u)) for u in lic.values()):
                err("license", "must map license names to URIs")
        else:
            err("license", "must be a name, a list of names or an object")

    prov = meta.get("provides")
    if "provides" in meta:
        if not isinstance(prov, dict) or not prov:
            err("provides", "must be an object with one or more extensions")
        else:
            for ext, spec in prov.items():
                where = f"provides.{ext}"
                if not is_term(ext):
                    err(where, "the extension name must be a Term")
                if not check_keys(where, spec, {"file", "version", "abstract", "docfile", "docpath"},
                                  ("file", "version")):
                    continue
                if "version" in spec and not (isinstance(spec["version"], str) and SEMVER.match(spec["version"])):
                    err(where + ".version", f"{spec['version']!r} is not a SemVer")
                for key in ("file", "docfile"):
                    if key in spec and not is_path(spec[key]):
                        err(f"{where}.{key}", "must be a relative path in Unix conventions")
                for key in ("abstract", "docpath"):
                    if key in spec and not is_str(spec[key]):
                        err(f"{where}.{key}", "must be a non-empty string")

    ms = meta.get("meta-spec")
    if "meta-spec" in meta and check_keys("meta-spec", ms, {"version", "url"}, ("version",)):
        if "version" in ms and not (isinstance(ms["version"], str) and re.match(r"^1\.0\.\d+$", ms["version"])):
            err("meta-spec.version", "must be 1.0.x")
        if "url" in ms and ms["url"] not in ("https://pgxn.org/meta/spec.txt", "http://pgxn.org/meta/spec.txt"):
            err("meta-spec.url", "must be the spec's URL")

    pre = meta.get("prereqs")
    if "prereqs" in meta and check_keys("prereqs", pre, PHASES):
        if not pre:
            err("prereqs", "must have at least one phase")
        for phase, rels in pre.items():
            if CUSTOM.match(phase):
                continue
            if not check_keys(f"prereqs.{phase}", rels, RELATIONSHIPS):
                continue
            if not rels:
                err(f"prereqs.{phase}", "must have at least one relationship")
            for rel, deps in rels.items():
                where = f"prereqs.{phase}.{rel}"
                if CUSTOM.match(rel):
                    continue
                if not isinstance(deps, dict) or not deps:
                    err(where, "must map one or more extension names to version ranges")
                    continue
                for name, rng in deps.items():
                    if not is_term(name):
                        err(where, f"{name!r} is not a Term")
                    if not is_version_range(rng):
                        err(f"{where}.{name}", f"{rng!r} is not a version range")

    if "release_status" in meta and meta["release_status"] not in ("stable", "testing", "unstable"):
        err("release_status", "must be stable, testing or unstable")

    tags = meta.get("tags")
    if "tags" in meta and not (isinstance(tags, list) and tags and all(is_tag(t) for t in tags)):
        err("tags", "must be a non-empty list of tags (2 to 255 characters, no slash, backslash or control)")

    ni = meta.get("no_index")
    if "no_index" in meta and check_keys("no_index", ni, {"file", "directory"}):
        if "file" not in ni and "directory" not in ni:
            err("no_index", "needs file or directory")
        for key in ("file", "directory"):
            v = ni.get(key)
            if v is None:
                continue
            items = v if isinstance(v, list) else [v]
            if not items or not all(is_path(x) for x in items) or len(set(items)) != len(items):
                err(f"no_index.{key}", "must be a path or a non-empty list of distinct paths")

    res = meta.get("resources")
    if "resources" in meta and check_keys("resources", res, {"homepage", "bugtracker", "repository"}):
        if not res:
            err("resources", "must have at least one key")
        if "homepage" in res and not (isinstance(res["homepage"], str) and URI.match(res["homepage"])):
            err("resources.homepage", "must be a URI")
        bt = res.get("bugtracker")
        if bt is not None and check_keys("resources.bugtracker", bt, {"web", "mailto"}):
            if "web" not in bt and "mailto" not in bt:
                err("resources.bugtracker", "needs web or mailto")
            if "web" in bt and not (isinstance(bt["web"], str) and URI.match(bt["web"])):
                err("resources.bugtracker.web", "must be a URI")
            if "mailto" in bt and not (isinstance(bt["mailto"], str) and EMAIL.match(bt["mailto"])):
                err("resources.bugtracker.mailto", "must be an email address")
        repo = res.get("repository")
        if repo is not None and check_keys("resources.repository", repo, {"url", "web", "type"}):
            if not ("web" in repo or ("url" in repo and "type" in repo)):
                err("resources.repository", "needs web, or url with type")
            for key in ("url", "web"):
                if key in repo and not (isinstance(repo[key], str) and URI.match(repo[key])):
                    err(f"resources.repository.{key}", "must be a URI")
            if "type" in repo and not (isinstance(repo["type"], str) and repo["type"] == repo["type"].lower()):
                err("resources.repository.type", "must be a lowercase VCS name")


def control_values(path):
    values = {}
    with open(path) as f:
        for line in f:
            m = re.match(r"^\s*(\w+)\s*=\s*'?([^'#]*?)'?\s*(#.*)?$", line)
            if m:
                values[m.group(1)] = m.group(2).strip()
    return values


def tracked_or_trackable(path):
    """True unless git says the path is ignored (a built file a release lacks)."""
    try:
        r = subprocess.run(["git", "check-ignore", "-q", path], capture_output=True)
    except FileNotFoundError:
        return True
    return r.returncode != 0   # 0: ignored; 1: not ignored; 128: not a git checkout


def project_checks(meta):
    control = control_values("booking.control")
    default = control.get("default_version")
    ok = True

    def check(description, cond, detail=""):
        nonlocal ok
        print(("ok - " if cond else "not ok - ") + description)
        if not cond:
            ok = False
            if detail:
                print(f"#   {detail}")

    ext = meta.get("provides", {}).get("booking", {})
    check("META.json provides the extension booking", bool(ext))
    check(f"the distribution version is booking.control's default_version ({default})",
          meta.get("version") == default, f"META.json says {meta.get('version')!r}")
    check("the extension version is the distribution version",
          ext.get("version") == meta.get("version"), f"provides.booking.version is {ext.get('version')!r}")
    for key in ("file", "docfile"):
        path = ext.get(key)
        check(f"provides.booking.{key} {path} exists and is not ignored by git (a release has it)",
              bool(path) and os.path.isfile(path) and tracked_or_trackable(path))
    for key in ("x_documentation", "x_result_codes", "x_changelog", "x_versions"):
        if key in meta.get("resources", {}):
            check(f"resources.{key} {meta['resources'][key]} exists", os.path.isfile(meta["resources"][key]))
    requires = meta.get("prereqs", {}).get("runtime", {}).get("requires", {})
    check("runtime requires PostgreSQL 15.0.0 or later", requires.get("PostgreSQL") == "15.0.0",
          f"got {requires.get('PostgreSQL')!r}")
    for dep in [d.strip() for d in control.get("requires", "").split(",") if d.strip()]:
        check(f"runtime requires {dep} (booking.control requires it)", dep in requires)
    # the majors META.json names are the ones the test command tests: 15, and
    # one version stage (pgN) of test/run.sh per other major
    pg = meta.get("x_postgresql", {})
    stages = []
    if os.path.isfile("test/run.sh"):
        m = re.search(r'^ALL_STAGES="([^"]*)"', open("test/run.sh").read(), re.M)
        stages = sorted(x[2:] for x in (m.group(1).split() if m else []) if re.fullmatch(r"pg[0-9]+", x))
    check("x_postgresql.tested is 15 and the majors of test/run.sh's version stages",
          sorted(pg.get("tested", {})) == sorted(["15"] + stages), f"tested {sorted(pg.get('tested', {}))}, stages {stages}")
    check("x_postgresql.supported is what is tested", sorted(pg.get("supported", [])) == sorted(pg.get("tested", {})),
          f"supported {pg.get('supported')}")
    return ok


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "META.json"
    try:
        with open(path) as f:
            meta = json.load(f)
    except (OSError, ValueError) as e:
        print(f"not ok - {path} is valid JSON")
        print(f"#   {e}")
        return 1
    print(f"ok - {path} is valid JSON")
    validate(meta)
    if errors:
        print("not ok - META.json follows the PGXN Meta Spec 1.0")
        for e in errors:
            print(f"#   {e}")
    else:
        print("ok - META.json follows the PGXN Meta Spec 1.0")
    project_ok = project_checks(meta) if isinstance(meta, dict) else False
    return 0 if not errors and project_ok else 1


if __name__ == "__main__":
    sys.exit(main())
