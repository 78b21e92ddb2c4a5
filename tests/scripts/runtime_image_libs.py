#!/usr/bin/env python3
"""The container's runtime stage provides every shared library the binary
needs. Reads the binary's NEEDED entries (readelf -d), maps each to the
Debian package that ships it on this machine (dpkg -S), and checks that the
packages the Dockerfile's last stage installs, or their dependency closure
(apt-cache depends --recurse), include that package. Exits 1 naming every
missing package. No container engine is needed.
Usage: tests/scripts/runtime_image_libs.py BINARY DOCKERFILE"""
import re
import shlex
import subprocess
import sys

LIB_DIRS = ("/lib/", "/usr/lib/", "/lib64/", "/usr/lib64/")


def needed(binary):
    out = subprocess.run(["readelf", "-d", binary], check=True, capture_output=True, text=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def package_of(soname):
    """The package shipping `soname` in a library folder, without its
    architecture; None when no installed package does."""
    run = subprocess.run(["dpkg", "-S", "*/" + soname], capture_output=True, text=True)
    for line in run.stdout.splitlines():
        package, _, path = line.partition(": ")
        path = path.strip()
        if path.endswith("/" + soname) and path.startswith(LIB_DIRS) and "/debug/" not in path:
            return package.split(":")[0].split(",")[0].strip()
    return None


def runtime_packages(dockerfile):
    """Packages `apt-get install` names in the Dockerfile's last stage."""
    text = open(dockerfile).read().replace("\\\n", " ")
    stages = re.split(r"^FROM\s", text, flags=re.M)
    packages = []
    for line in stages[-1].splitlines():
        if not line.startswith("RUN"):
            continue
        for command in re.split(r"&&|;", line[3:]):
            words = shlex.split(command)
            if "apt-get" in words and "install" in words:
                after = words[words.index("install") + 1:]
                packages += [w for w in after if not w.startswith("-")]
    return packages


def closure(packages):
    run = subprocess.run(
        ["apt-cache", "depends", "--recurse", "--no-recommends", "--no-suggests", "--no-conflicts",
         "--no-breaks", "--no-replaces", "--no-enhances", *packages],
        capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit("apt-cache depends failed: " + run.stderr.strip())
    found = set(packages)
    for line in run.stdout.splitlines():
        if not line.startswith(" "):
            found.add(line.strip().split(":")[0])
        else:
            match = re.match(r"\s+\|?(?:Pre)?Depends:\s+<?([^>\s]+)>?", line)
            if match:
                found.add(match.group(1).split(":")[0])
    return found


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    binary, dockerfile = sys.argv[1:]
    installed = runtime_packages(dockerfile)
    if not installed:
        print(f"{dockerfile}: its last stage installs no packages")
        return 1
    provided = closure(installed)
    problems = []
    for soname in needed(binary):
        package = package_of(soname)
        if package is None:
            problems.append(f"{soname}: no installed package ships it (dpkg -S)")
        elif package not in provided:
            problems.append(f"{soname}: missing package {package} (not installed by the runtime "
                            f"stage, nor a dependency of what it installs)")
        else:
            print(f"{soname}: {package}")
    for problem in problems:
        print(problem)
    print(f"{len(installed)} packages installed by the runtime stage, {len(provided)} with their "
          f"dependencies; {len(problems)} libraries missing")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
