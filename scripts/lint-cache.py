#!/usr/bin/env python3
"""The lint's cache of clean results (scripts/lint.sh uses it).

A source that clang-tidy found clean need not be linted again while nothing
that decides its result has changed. The key of a source covers exactly that:

  - the translation unit: the source and every header it read, by content
    (the list read from the build's dependency log, ninja's deps database);
    when the build has no such log for the source, the preprocessed
    translation unit itself (the compile command with -E);
  - the compile command (flags, defines, include paths), with the tree's own
    location replaced, so that another clone of the same tree shares keys;
  - the .clang-tidy files of the tree, lint.sh and this script;
  - clang-tidy's version.

Only clean results are kept (one empty file per key); a source with a finding
is linted every time, so its findings are always printed.

  lint-cache.py keys ROOT BUILD CLANG_TIDY FILE...   print "KEY FILE" per line
  lint-cache.py store CACHE_DIR KEY...               record clean results
"""
import hashlib
import json
import os
import shlex
import subprocess
import sys


def sha(data):
    return hashlib.sha256(data).hexdigest()


class Hasher:
    def __init__(self):
        self.known = {}

    def file(self, path):
        digest = self.known.get(path)
        if digest is None:
            try:
                with open(path, "rb") as f:
                    digest = sha(f.read())
            except OSError:
                digest = "missing"
            self.known[path] = digest
        return digest


def ninja_deps(build):
    """object path (relative to the build directory) -> absolute dependency paths."""
    if not os.path.exists(os.path.join(build, "build.ninja")):
        return {}
    try:
        out = subprocess.run(["ninja", "-C", build, "-t", "deps"], capture_output=True,
                             text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return {}
    deps, current = {}, None
    for line in out.splitlines():
        if not line.strip():
            current = None
        elif not line.startswith(" "):
            target, _, state = line.partition(": ")
            # A stale record (the object is newer than what the log saw) is
            # not trusted: the source is keyed by its preprocessed text.
            current = [] if "(VALID)" in state else None
            if current is not None:
                deps[target] = current
        elif current is not None:
            current.append(os.path.normpath(os.path.join(build, line.strip())))
    return deps


def command_of(entry):
    if "arguments" in entry:
        return list(entry["arguments"])
    return shlex.split(entry["command"])


def preprocessed(entry):
    """The translation unit as the preprocessor writes it, or None."""
    args, out, skip = command_of(entry), [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
            continue
        if a in ("-c", "-MD", "-MMD") or a.startswith("-o"):
            continue
        out.append(a)
    try:
        r = subprocess.run(out + ["-E"], cwd=entry.get("directory", "."), capture_output=True,
                           check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return r.stdout


def tree_config(root, hasher):
    """The .clang-tidy files of the tree, lint.sh and this script."""
    parts = []
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x != ".git" and not x.startswith("build"))
        if ".clang-tidy" in files:
            path = os.path.join(d, ".clang-tidy")
            parts.append(os.path.relpath(path, root) + "=" + hasher.file(path))
    for own in ("scripts/lint.sh", "scripts/lint-cache.py"):
        parts.append(own + "=" + hasher.file(os.path.join(root, own)))
    return "\n".join(parts)


def keys(root, build, clang_tidy, files):
    root = os.path.realpath(root)
    build = os.path.realpath(build)
    hasher = Hasher()
    version = subprocess.run([clang_tidy, "--version"], capture_output=True, text=True).stdout
    common = sha((version + "\n" + tree_config(root, hasher)).encode())
    with open(os.path.join(build, "compile_commands.json")) as f:
        db = {os.path.realpath(os.path.join(e.get("directory", "."), e["file"])): e
              for e in json.load(f)}
    deps = ninja_deps(build)

    def local(text):
        return text.replace(root, "@ROOT@")

    for name in files:
        path = os.path.realpath(name)
        entry = db.get(path)
        if entry is None:
            print("- " + name)
            continue
        h = hashlib.sha256()
        h.update(common.encode())
        h.update(local(" ".join(command_of(entry))).encode())
        h.update(local(path).encode())
        obj = entry.get("output")
        read = deps.get(obj) if obj else None
        if read:
            for dep in [path] + sorted(set(read) - {path}):
                h.update(("\n" + local(dep) + "=" + hasher.file(dep)).encode())
        else:
            text = preprocessed(entry)
            if text is None:
                print("- " + name)
                continue
            h.update(local(text.decode("utf-8", "replace")).encode())
        print(h.hexdigest() + " " + name)


def store(cache, keys_):
    os.makedirs(cache, exist_ok=True)
    for k in keys_:
        if k != "-":
            open(os.path.join(cache, k), "w").close()


def main(argv):
    if len(argv) >= 4 and argv[0] == "keys":
        keys(argv[1], argv[2], argv[3], argv[4:])
    elif len(argv) >= 2 and argv[0] == "store":
        store(argv[1], argv[2:])
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
