"""Dask's own per-task instrumentation, timed warm (in a loop) and cold (alone, after a walk).

What it measures: the CPU Dask 2026.8 (distributed 2026.8.0) spends per task on its own
instrumentation, i.e. the code that exists to meter, log and aggregate, not to schedule or run:

worker (distributed.worker, worker_state_machine, metrics, spill, core):
  * DelayedMetricsLedger() and ledger.record(key="async-instruction") around execute()
    (BaseWorker._start_async_instruction) and again around handle_stimulus()
    (BaseWorker._finish_async_instruction);
  * execute(): the time() pair around reading the dependencies (disk-read startstops);
    SpillBuffer.__getitem__'s metering of each dependency read (_capture_metrics and the two
    context_meter.digest_metric("memory-read", ...) calls), one dependency per task;
    context_meter.meter("executor"); _run_task_simple's meter("thread-noncpu", func=time) and
    meter("thread-cpu", func=thread_time) around an empty task;
  * WorkerState: stimulus_log.append(ev.to_loggable(...)) for the ComputeTaskEvent and the
    ExecuteSuccessEvent; the log entries of compute-task, six transitions (released > waiting >
    ready > executing > memory > released > forgotten, transition_counter included) and
    put-in-memory; ts.startstops.append(compute); TaskCounter.new_task and three
    TaskCounter.transitions (one per stimulus);
  * BaseWorker._finalize_metrics: ledger.finalize and Worker.digest_metric
    (= Server.digest_metric) for each of the six metrics it yields.
scheduler (distributed.scheduler):
  * transition_counter and transition_log.append(Transition(...)) for five transitions
    (released > waiting > processing > memory > released > forgotten);
  * TaskGroup.add_duration (and through it TaskPrefix.add_duration) for the compute startstop.
heartbeat (amortized, reported apart): Worker.get_metrics's swap and span squash of
  digests_total_since_heartbeat with SpansWorkerExtension.collect_digests/heartbeat, and the
  scheduler's cumulative_worker_metrics sum with SpansSchedulerExtension.heartbeat, after 250
  tasks (a worker running 2 ms tasks at a 0.5 s heartbeat).

Real Dask classes and functions are called; the few instrumentation statements Dask writes inline
(the log appends, the dependency-read metering, the time() pair) are the same statements run
against the real objects (a real WorkerState's deques and TaskCounter, a real SpillBuffer).

Method (as bench/cache.bench.ts): each figure is the median over SAMPLES samples of PER_SAMPLE
tasks of (time around the task's instrumentation) - (time around nothing, after the same walk),
per task. "warm loop": PER_SAMPLE tasks back to back, less an empty loop. "alone": each task timed
alone with no walk; "2 MiB"/"8 MiB": each task timed alone right after a walk writing one byte in
every 64-byte line of that much of a buffer (the walk is never timed). perf_counter_ns gives the
figures; thread_time_ns deltas are reported too (their median).

Run:
  python3 -m venv /tmp/daskbench
  /tmp/daskbench/bin/pip install "distributed==2026.8.0" "dask==2026.8.0" numpy
  /tmp/daskbench/bin/python bench/dask/instrumentation_cost.py [--samples 25] [--per-sample 200]
      [--prefixes 5]
--prefixes: prefixes with tasks in flight (1,000 tasks over waiting, ready and memory): each
TaskCounter.transitions walks every (prefix, state) pair, so the worker's figure grows with it
(a reduction has a handful; 100 prefixes, cache.bench.ts's count, add ~90 µs a task).
"""
import argparse
import gc
import statistics
import sys
import tempfile
import time as _t
import uuid
from collections import defaultdict, deque
from types import SimpleNamespace

import numpy as np

import dask
import distributed
from dask.utils import key_split
from distributed.core import Server
from distributed.metrics import DelayedMetricsLedger, context_meter, thread_time
from distributed.metrics import time as dtime
from distributed.scheduler import TaskGroup, TaskPrefix, Transition
from distributed.scheduler import TaskState as STaskState
from distributed.spans import CONTEXTS_WITH_SPAN_ID, SpansSchedulerExtension, SpansWorkerExtension
from distributed.spill import SpillBuffer
from distributed.worker_state_machine import (
    BaseWorker, ComputeTaskEvent, ExecuteSuccessEvent, WorkerState,
)
from distributed.worker_state_machine import TaskState as WTaskState

ap = argparse.ArgumentParser()
ap.add_argument("--samples", type=int, default=25)
ap.add_argument("--per-sample", type=int, default=200)
ap.add_argument("--prefixes", type=int, default=5, help="task prefixes with tasks in flight on the worker")
args = ap.parse_args()
SAMPLES, PER_SAMPLE, PREFIXES, POOL, TASKS_PER_HEARTBEAT = args.samples, args.per_sample, args.prefixes, 1 << 14, 250
pc, tt = _t.perf_counter_ns, _t.thread_time_ns

class BenchWorker(BaseWorker):
    """A BaseWorker with Server's digest attributes; digest_metric is Worker.digest_metric's."""

    def __init__(self):
        super().__init__(WorkerState(nthreads=1, address="tcp://127.0.0.1:1", validate=False))
        self.digests = None  # Server sets this to None without crick (not installed by default)
        self.digests_total = defaultdict(int)
        self.digests_total_since_heartbeat = defaultdict(int)
        self.digests_max = defaultdict(int)

    def digest_metric(self, name, value):
        Server.digest_metric(self, name, value)

    def batched_send(self, msg): pass
    async def gather_dep(self, *a, **k): pass
    execute = retry_busy_worker_later = gather_dep

W = BenchWorker()
ST = W.state
SPAN_ID = str(uuid.uuid4())
buf = SpillBuffer(tempfile.mkdtemp(prefix="daskbench-"), target=1 << 30)
sched = SimpleNamespace(transition_log=deque(maxlen=dask.config.get("distributed.admin.low-level-log-length")),
                        transition_counter=0, cumulative_worker_metrics=defaultdict(int),
                        total_nthreads_history=[(0.0, 2)])
spans_s = SpansSchedulerExtension(sched)
spans_s._ensure_span(("default",), (SPAN_ID,))
spans_w = SpansWorkerExtension(W)

rng = np.random.default_rng(0)
names = [f"sum{j:02d}-{uuid.UUID(int=int(rng.integers(1 << 62))).hex}" for j in range(PREFIXES)]
groups = {n: TaskGroup(n, TaskPrefix(key_split(n))) for n in names}  # group "sum07-<hex>", prefix "sum07"

def make_task(i):
    name = names[i % PREFIXES]
    key, dkey = (name, i), (name, i + POOL)
    ts = WTaskState(key, span_id=SPAN_ID)
    ST.tasks[key] = ts
    buf[dkey] = i  # the dependency, in memory
    cev = ComputeTaskEvent(key=key, run_id=i, who_has={}, nbytes={}, priority=(0, 1, i),
                           run_spec=ComputeTaskEvent.dummy_runspec(key), resource_restrictions={},
                           actor=False, annotations={}, span_id=SPAN_ID,
                           stimulus_id=f"compute-task-{_t.time()}")
    ev = ExecuteSuccessEvent(key=key, run_id=i, value=i, start=0.0, stop=0.0, nbytes=28, type=int,
                             stimulus_id=f"task-finished-{_t.time()}")
    sts = STaskState(key, None, "released", groups[name], False)
    return ts, dkey, cev, ev, sts, f"free-keys-{_t.time()}"

pool = [make_task(i) for i in range(POOL)]
for j, (ts, *_) in enumerate(pool[POOL - 1000:]):  # 1,000 tasks in flight, TaskCounter counts
    ts.state = ("waiting", "ready", "memory")[j % 3]  # (prefix, state) pairs: 3 per prefix
    ST.task_counter.new_task(ts)
ST.task_counter.transitions({ts: "released" for ts, *_ in pool[POOL - 1000:]})
IN_FLIGHT = POOL - 1000  # the keys measured cycle through the others
for d in (ST.log, ST.stimulus_log, sched.transition_log):  # logs at their steady state: full
    while len(d) < d.maxlen:
        d.append((("prefill", len(d)), "released", "waiting", {}, "prefill", dtime()))

def wlog(ts, start, finish, recs, stimulus_id):
    """worker_state_machine.WorkerState._transition's counter and log entry."""
    ST.transition_counter += 1
    ST.log.append((ts.key, start, finish, ts.state,
                   {t.key: new[0] if isinstance(new, tuple) else new for t, new in recs.items()},
                   stimulus_id, dtime()))

def worker_task(i):
    ts, dkey, cev, ev, _, fsid = pool[i]
    key = ts.key
    # compute-task stimulus: WorkerState.handle_stimulus, _handle_compute_task, _transitions
    ST.stimulus_log.append(cev.to_loggable(handled=dtime()))
    ST.task_counter.new_task(ts)
    ST.log.append((key, "compute-task", ts.state, cev.stimulus_id, dtime()))
    wlog(ts, "released", "waiting", {ts: "ready"}, cev.stimulus_id)
    wlog(ts, "waiting", "ready", {}, cev.stimulus_id)
    ts.state = "executing"
    wlog(ts, "ready", "executing", {}, cev.stimulus_id)
    ST.task_counter.transitions({ts: "released"})
    # BaseWorker._start_async_instruction and Worker.execute
    ledger = DelayedMetricsLedger()
    with ledger.record(key="async-instruction"):
        start = dtime()
        with buf._capture_metrics():  # SpillBuffer.__getitem__'s metering of the dependency read
            if dkey in buf.fast:
                memory_size = buf.fast.weights[dkey]
                context_meter.digest_metric("memory-read", 1, "count")
                context_meter.digest_metric("memory-read", memory_size, "bytes")
        stop = dtime()
        if stop - start > 0.005:
            ts.startstops.append({"action": "disk-read", "start": start, "stop": stop})
        with context_meter.meter("executor"):
            with (context_meter.meter("thread-noncpu", func=dtime) as m,
                  context_meter.meter("thread-cpu", func=thread_time)):
                pass  # the task itself
            ev.start, ev.stop = m.start, m.stop
    # BaseWorker._finish_async_instruction: handle_stimulus(ExecuteSuccessEvent) in the ledger
    with ledger.record(key="async-instruction"):
        ST.stimulus_log.append(ev.to_loggable(handled=dtime()))
        ts.startstops.append({"action": "compute", "start": ev.start, "stop": ev.stop})
        ts.state = "memory"
        wlog(ts, "executing", "memory", {}, ev.stimulus_id)
        ST.log.append((key, "put-in-memory", ev.stimulus_id, dtime()))
        ST.task_counter.transitions({ts: "executing"})
    W._finalize_metrics(ev, ledger, ts.span_id)
    # free-keys stimulus (its stimulus_log and free-keys entries are per batch: left out)
    ts.state = "released"
    wlog(ts, "memory", "released", {ts: "forgotten"}, fsid)
    ts.state = "forgotten"
    wlog(ts, "released", "forgotten", {}, fsid)
    ST.task_counter.transitions({ts: "memory"})

S_PATH = (("released", "waiting"), ("waiting", "processing"), ("processing", "memory"),
          ("memory", "released"), ("released", "forgotten"))

def scheduler_task(i):
    ts, _, cev, ev, sts, fsid = pool[i]
    recs = {}
    for start, finish in S_PATH:  # SchedulerState._transition's counter and log entry
        sched.transition_counter += 1
        if finish == "memory":  # _transition_processing_memory: the startstops
            for ss in ts.startstops:
                sts.group.add_duration(stop=ss["stop"], start=ss["start"], action=ss["action"])
        sched.transition_log.append(Transition(sts.key, start, finish, recs, cev.stimulus_id, dtime()))

def both(i):
    worker_task(i)
    scheduler_task(i)

def reset(i):
    ts = pool[i][0]
    ts.state = "released"
    ts.startstops.clear()

def heartbeat(_):
    """Worker.get_metrics's digest part, and Scheduler.heartbeat_worker's, with the spans."""
    d = W.digests_total_since_heartbeat
    W.digests_total_since_heartbeat = defaultdict(int)
    spans_w.collect_digests(d)
    digests = defaultdict(int)
    for k, v in d.items():
        if isinstance(k, tuple) and k[0] in CONTEXTS_WITH_SPAN_ID:
            k = k[:1] + k[2:]
        digests[k] += v
    msg = dict(digests)
    for name, value in msg.items():
        sched.cumulative_worker_metrics[name] += value
    spans_s.heartbeat(None, spans_w.heartbeat())

def nothing(_): pass

arena = np.zeros(8 << 20, dtype=np.uint8)
views = {b: arena[:b:64] for b in (2 << 20, 8 << 20)}

def walk(nbytes):
    if nbytes:
        v = views[nbytes]
        np.add(v, 1, out=v)

cursor = 0

def next_keys(n):
    global cursor
    ks = [(cursor + j) % IN_FLIGHT for j in range(n)]
    cursor = (cursor + n) % IN_FLIGHT
    return ks

def before_heartbeat(_):  # 250 tasks' digests, untimed
    for i in next_keys(TASKS_PER_HEARTBEAT):
        worker_task(i)
        reset(i)

def measure(fn, mode, per_sample=PER_SAMPLE, prepare=None):
    """Per-sample µs per call (perf_counter) and (thread_time), as lists."""
    wall, cpu = [], []
    for _ in range(SAMPLES):
        ks = next_keys(per_sample)
        w = c = 0
        if mode == "warm":
            for pass_fn, sign in ((fn, 1), (nothing, -1)):
                if prepare:
                    prepare(0)
                t0, c0 = pc(), tt()
                for i in ks:
                    pass_fn(i)
                c1, t1 = tt(), pc()
                w += sign * (t1 - t0)
                c += sign * (c1 - c0)
        else:
            nbytes = mode
            for i in ks:
                if prepare:
                    prepare(i)
                walk(nbytes)
                t0, c0 = pc(), tt()
                fn(i)
                c1, t1 = tt(), pc()
                walk(nbytes)
                t2, c2 = pc(), tt()
                c3, t3 = tt(), pc()
                w += (t1 - t0) - (t3 - t2)
                c += (c1 - c0) - (c3 - c2)
        for i in ks:
            reset(i)
        wall.append(w / per_sample / 1000)
        cpu.append(c / per_sample / 1000)
    return wall, cpu

def q(xs):
    qs = statistics.quantiles(xs, n=4)
    return qs[0], statistics.median(xs), qs[2]

MODES = [("warm loop", "warm"), ("alone, no walk", 0), ("alone, after 2 MiB", 2 << 20),
         ("alone, after 8 MiB", 8 << 20)]
PARTS = [("worker", worker_task), ("scheduler", scheduler_task), ("worker+scheduler", both)]

gc.collect()
gc.freeze()  # the setup's objects out of the collector's way; the measured code's are not
for _, fn in PARTS:  # warm-up: every path run and specialized before anything is timed
    for _, mode in MODES:
        measure(fn, mode, per_sample=20)

results = {}
for part, fn in PARTS:
    for label, mode in MODES:
        results[part, label] = measure(fn, mode)
hb = {label: measure(heartbeat, mode, per_sample=4, prepare=before_heartbeat) for label, mode in MODES[1:]}

print(f"Dask's own per-task instrumentation (distributed {distributed.__version__}, Python "
      f"{sys.version.split()[0]}, {PREFIXES} prefixes; µs per task, median [q1-q3] of {SAMPLES} samples of {PER_SAMPLE}; "
      f"thread CPU = median of thread_time_ns deltas)")
print("| | " + " | ".join(f"{p} (perf_counter) | {p} (thread CPU)" for p, _ in PARTS) + " | total cold/warm |")
print("|---|" + "---|---|" * len(PARTS) + "---|")
warm_total = q(results["worker+scheduler", "warm loop"][0])[1]
for label, _ in MODES:
    cells = []
    for part, _ in PARTS:
        wall, cpu = results[part, label]
        lo, med, hi = q(wall)
        cells += [f"{med:.2f} [{lo:.2f}-{hi:.2f}]", f"{statistics.median(cpu):.2f}"]
    ratio = q(results["worker+scheduler", label][0])[1] / warm_total
    print(f"| {label} | " + " | ".join(cells) + f" | {ratio:.2f}x |")
print(f"\nheartbeat digest aggregation (worker + scheduler, spans), after {TASKS_PER_HEARTBEAT} tasks:")
for label, _ in MODES[1:]:
    lo, med, hi = q(hb[label][0])
    print(f"  {label}: {med:.1f} µs [{lo:.1f}-{hi:.1f}] per heartbeat = "
          f"{med / TASKS_PER_HEARTBEAT:.3f} µs per task")
print(f"\nsum of separate medians (worker + scheduler): " + ", ".join(
    f"{label} {q(results['worker', label][0])[1] + q(results['scheduler', label][0])[1]:.2f}"
    for label, _ in MODES))
