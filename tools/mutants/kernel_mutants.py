#!/usr/bin/env python3
"""kernel_mutants.py — how many realistic GPU kernel bugs `make test` catches.

Each mutant in kernel_mutants.json is one edit to the shared kernel source (plugins/kernels, the
one source of the OpenCL and CUDA kernels), a Vulkan shader or a plugin's host side: an exact text
that must occur once in the file and its replacement, and optionally its own "tests" (a CTest
regular expression) and "targets" (comma-separated) in place of the defaults. For each mutant this script applies it, rebuilds the targets that
compile the kernels, runs the CTest entries that should catch it, records which failed and the
first report line, and puts the file back (also on Ctrl-C or a failed build). A mutant that does
not apply or does not build is reported as such, never counted as caught.

usage: tools/mutants/kernel_mutants.py BUILD_DIR [--tests REGEX] [--targets T1,T2] [ID ...]
  default tests: the CUDA checking executor's and the emulated driver's conformance runs
  default targets: fake_libcuda_check, fake_libcuda_emu, parity_plugin_cuda
Prints a Markdown table; exit status 0 when every applied mutant was caught, 1 otherwise, 2 when
the script could not run.
"""
import json
import os
import re
import signal
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_TESTS = r"^cuda_(check_conform|emulated_conform)"
DEFAULT_TARGETS = "fake_libcuda_check,fake_libcuda_emu,parity_plugin_cuda"


def build(build_dir, targets):
    """Build in a process group of its own. Interrupted (Ctrl-C), the whole group is killed and
    waited for before the caller restores the source: a compiler still running could otherwise
    write an object built from the mutant after the restore, newer than the restored file, and
    later runs would count that mutant as caught without it."""
    cmd = ["cmake", "--build", build_dir, "-j2"]
    for t in targets:
        cmd += ["--target", t]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = p.communicate()
    except BaseException:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        raise
    return p.returncode == 0, out


def first_report(output):
    for pattern in (r"^(cuda-check|opencl-check): .*$", r"^FAIL .*$", r"^\s+run failed: .*$"):
        m = re.search(pattern, output, re.M)
        if m:
            return m.group(0).strip()
    return ""


def run_one(m, build_dir, tests, targets):
    tests = m.get("tests", tests)
    targets = m["targets"].split(",") if "targets" in m else targets
    path = os.path.join(ROOT, m["file"])
    with open(path) as f:
        original = f.read()
    if original.count(m["old"]) != 1:
        return "does not apply", [], ""
    try:
        with open(path, "w") as f:
            f.write(original.replace(m["old"], m["new"]))
        ok, log = build(build_dir, targets)
        if not ok:
            return "does not build", [], log.strip().splitlines()[-1] if log.strip() else ""
        r = subprocess.run(["ctest", "--test-dir", build_dir, "-R", tests, "-j2", "--output-on-failure"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        failed = re.findall(r"^\s*\d+ - (\S+) \(", r.stdout, re.M)
        return ("caught" if r.returncode != 0 else "missed"), failed, first_report(r.stdout)
    finally:
        with open(path, "w") as f:
            f.write(original)


def main(argv):
    if len(argv) < 2 or argv[1].startswith("-"):
        print(__doc__.strip().split("\n\n")[2], file=sys.stderr)
        return 2
    build_dir, tests, targets, ids = argv[1], DEFAULT_TESTS, DEFAULT_TARGETS, []
    args = iter(argv[2:])
    for a in args:
        if a == "--tests":
            tests = next(args, tests)
        elif a == "--targets":
            targets = next(args, targets)
        else:
            ids.append(a)
    with open(os.path.join(HERE, "kernel_mutants.json")) as f:
        mutants = json.load(f)
    unknown = [i for i in ids if i not in {m["id"] for m in mutants}]
    if unknown:
        print("kernel_mutants.py: unknown mutant(s): " + ", ".join(unknown), file=sys.stderr)
        return 2
    chosen = [m for m in mutants if not ids or m["id"] in ids]
    target_list = targets.split(",")
    all_targets = sorted(set(target_list).union(*[m["targets"].split(",") for m in chosen if "targets" in m]))
    ok, log = build(build_dir, all_targets)
    if not ok:
        print("kernel_mutants.py: the unmutated tree does not build:\n" + log[-2000:], file=sys.stderr)
        return 2
    print("| mutant | bug | result | failing tests | first report |")
    print("|---|---|---|---|---|")
    applied = caught = 0
    for m in chosen:
        result, failed, report = run_one(m, build_dir, tests, target_list)
        applied += result in ("caught", "missed")
        caught += result == "caught"
        print("| `%s` | %s | %s | %s | %s |" % (m["id"], m["bug"], result, ", ".join(failed) or "-",
                                                report.replace("|", "\\|")[:300] or "-"), flush=True)
    build(build_dir, all_targets)  # the unmutated tree again
    print("\n%d of %d applied mutants caught" % (caught, applied))
    return 0 if caught == applied else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
