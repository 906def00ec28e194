#!/usr/bin/env python3
"""torch_ref.py: PyTorch references for parity-bench, run as a subprocess that parity-bench talks
to one JSON line at a time, so that each torch figure's repetitions take turns with parity's own.

First line in:  {"threads": N, "min_rep_s": S}
First line out: {"available": true, "torch": "1.13.1", "threads": N, "cpus": "0,1"}
                (cpus: the CPUs this process may run on, inherited from parity-bench's pin)
                (or {"available": false, "reason": "..."} and exit, when torch cannot be imported)
Then, per figure (any answer may instead be {"id": 0, "error": "..."}):
  {"id": 0, "op": "sum", "a": [16777216], "b": []}  -> {"id": 0, "ready": true}
      make the op, run its warm-up call and its calibration call (how many calls last S seconds)
  {"id": 0, "rep": true}  -> {"id": 0, "seconds": 0.00123}
      one repetition: that many calls, timed here; the seconds per call (parity-bench takes the
      median of its repetitions, interleaved with parity's: tools/bench/timing.h)
  {"id": 0, "release": true}  -> {"id": 0, "released": true}
until end of input. Tensors are float32 on the CPU; forward-only figures run under torch.no_grad().
"train-cnn" times one training step (SGD with momentum, cross-entropy on one-hot targets) of the
CNN of tools/train/models.c on the batch "a".

The script re-executes itself once with glibc's malloc told to keep freed memory (MALLOC_*
below): by default glibc returns every block of 128 KiB or more to the kernel when it is freed,
so each torch op that makes a big tensor (conv2d's oneDNN reorders, a matmul's output) pays one
page fault per 4 KiB of it again, which on a virtual machine is most of the op (conv2d measured
21-24 GFLOP/s that way, 161-169 with the memory kept). parity's pool keeps its buffers, so this is
the like-for-like reference. A variable the caller already set is left as it is.
"""
import json
import os
import sys
import time

KEEP_MEMORY = {"MALLOC_MMAP_THRESHOLD_": "4294967296", "MALLOC_TRIM_THRESHOLD_": "4294967296",
               "MALLOC_TOP_PAD_": "268435456"}


def calibrate(fn, min_rep_s):
    """The warm-up call, then the calibration call: how many calls make one repetition."""
    fn()
    t0 = time.perf_counter()
    fn()
    one = time.perf_counter() - t0
    inner = 1 if one >= min_rep_s else (int(min_rep_s / one) + 1 if one > 0 else 1000000)
    return min(inner, 1000000)


def one_rep(fn, inner):
    t0 = time.perf_counter()
    for _ in range(inner):
        fn()
    return (time.perf_counter() - t0) / inner


def make_job(torch, op, a_shape, b_shape):
    F = torch.nn.functional
    gen = torch.Generator().manual_seed(5)
    a = torch.rand(a_shape, generator=gen) * 2 - 1
    b = torch.rand(b_shape, generator=gen) * 2 - 1 if b_shape else None
    if op == "add":
        return lambda: torch.add(a, b)
    if op == "exp":
        return lambda: torch.exp(a)
    if op == "tanh":
        return lambda: torch.tanh(a)
    if op == "gelu":
        return lambda: torch.nn.functional.gelu(a)
    if op == "sum":
        return lambda: torch.sum(a)
    if op == "rowsum":
        return lambda: torch.sum(a, dim=1)
    if op == "colsum":
        return lambda: torch.sum(a, dim=0)
    if op == "max":
        return lambda: torch.amax(a)
    if op == "argmax":
        return lambda: torch.argmax(a)
    if op == "softmax":
        return lambda: torch.softmax(a, dim=1)
    if op == "log_softmax":
        return lambda: torch.log_softmax(a, dim=1)
    if op == "matmul":
        return lambda: torch.matmul(a, b)
    if op == "conv2d-fwd":
        return lambda: F.conv2d(a, b, padding=1)
    if op == "train-cnn":  # one SGD step of the CNN of tools/train/models.c on the batch a
        nn = torch.nn
        torch.manual_seed(1)
        model = nn.Sequential(nn.Conv2d(1, 16, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2, 2),
                              nn.Conv2d(16, 32, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2, 2),
                              nn.Flatten(), nn.Linear(1568, 128), nn.ReLU(), nn.Linear(128, 10))
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        n = a_shape[0]
        target = torch.zeros(n, 10)
        target[torch.arange(n), torch.arange(n) % 10] = 1  # one-hot, as train.c's

        def train_step():
            opt.zero_grad()
            loss = F.cross_entropy(model(a), target)
            loss.backward()
            opt.step()
            return loss.item()  # read back each step, as parity's
        return train_step
    if op == "conv2d-fwd-bwd":
        a.requires_grad_(True)
        b.requires_grad_(True)
        seed = torch.ones(F.conv2d(a, b, padding=1).shape)

        def step():
            a.grad = None
            b.grad = None
            F.conv2d(a, b, padding=1).backward(seed)
        return step
    raise ValueError("unknown op " + op)


def reply(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main():
    if os.environ.get("PARITY_TORCH_REF_EXEC") != "1":
        env = dict(os.environ, PARITY_TORCH_REF_EXEC="1")
        for k, v in KEEP_MEMORY.items():
            env.setdefault(k, v)
        os.execve(sys.executable, [sys.executable] + sys.argv, env)
    line = sys.stdin.readline()
    cfg = json.loads(line) if line.strip() else {}
    try:
        import torch
    except Exception as e:  # ImportError, or a broken install
        reply({"available": False, "reason": "cannot import torch: %s" % e})
        return 0
    torch.set_num_threads(int(cfg.get("threads", 1)))
    min_rep_s = float(cfg.get("min_rep_s", 0.02))
    reply({"available": True, "torch": torch.__version__, "threads": torch.get_num_threads(),
           "cpus": ",".join(str(c) for c in sorted(os.sched_getaffinity(0)))})
    jobs = {}  # id -> (call, calls per repetition, the grad mode it runs in)
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        jid = req.get("id")
        try:
            if req.get("rep"):
                fn, inner, grad = jobs[jid]
                with torch.set_grad_enabled(grad):
                    s = one_rep(fn, inner)
                reply({"id": jid, "seconds": s})
            elif req.get("release"):
                jobs.pop(jid, None)
                reply({"id": jid, "released": True})
            else:
                op = req["op"]
                fn = make_job(torch, op, req["a"], req.get("b") or [])
                grad = op in ("conv2d-fwd-bwd", "train-cnn")
                with torch.set_grad_enabled(grad):
                    jobs[jid] = (fn, calibrate(fn, min_rep_s), grad)
                reply({"id": jid, "ready": True})
        except Exception as e:
            jobs.pop(jid, None)
            reply({"id": jid, "error": str(e)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
