#!/usr/bin/env python3
"""inboxd benchmarks against the targets of docs/design.md, Targets.

Run through bench/run, which builds everything first. Measures, on this machine:
  latency     arrival (rename into the Inbox) -> handler start, median and p90, against a
              plain posix_spawn of the same handler
  throughput  a burst of files to /bin/true, against a two-worker posix_spawn loop
  burst       50,000 files at once: none lost, none handled twice
  idle        wake-ups and resident memory of an idle agent

--compare LABEL=PATH (repeatable) runs another inboxd binary beside the main one, e.g. the build
before a change: in the same alternating rounds for latency and throughput, once after the main
one for burst and idle, with its ratio to the same peers and to the main inboxd.
"""
import argparse
import json
import os
import select
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


RUNNING = []  # agents to stop if a benchmark fails half-way


class Agent:
    """One inboxd on a private Inbox, state directory and handlers.d."""

    def __init__(self, inboxd, workdir, exec_line, environment=""):
        self.dir = workdir
        # Handlers run under identities of their own: they must reach the stamp log beside this.
        os.chmod(os.path.dirname(workdir), 0o755)
        self.inbox = os.path.join(workdir, "Inbox")
        self.staging = os.path.join(workdir, "staging")
        self.state = os.path.join(workdir, "state")
        self.runtime = os.path.join(workdir, "run")
        handlers = os.path.join(workdir, "handlers.d")
        for d in (self.inbox, self.staging, self.state, self.runtime, handlers):
            os.makedirs(d, exist_ok=True)
        with open(os.path.join(handlers, "bench.handler"), "w") as f:
            # The handler writes its stamps beside the agent's directories: allowed by its sandbox.
            f.write("[Handler]\nIdentifier=bench.handler\nExec=%s\n%s\nReadWritePaths=%s\n"
                    "[DocumentType]\nContentTypes=public.plain-text\nRank=Owner\n"
                    % (exec_line, environment, os.path.dirname(workdir)))
        self.container_inbox = os.path.join(self.state, "containers", "bench.handler", "Inbox")
        self.process = subprocess.Popen(
            [inboxd, "--inbox", self.inbox, "--handlers", handlers, "--state", self.state,
             "--runtime-dir", self.runtime, "--defaults", os.path.join(workdir, "none.conf")],
            stdout=subprocess.DEVNULL)
        RUNNING.append(self)
        status = os.path.join(self.runtime, "status.json")
        deadline = time.monotonic() + 30
        while not os.path.exists(status):
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise SystemExit("%s did not start" % inboxd)
            time.sleep(0.01)

    def stage(self, count, prefix="f"):
        names = ["%s%d.txt" % (prefix, i) for i in range(count)]
        for name in names:
            os.close(os.open(os.path.join(self.staging, name), os.O_CREAT | os.O_WRONLY, 0o644))
        return names

    def drop(self, name):
        os.rename(os.path.join(self.staging, name), os.path.join(self.inbox, name))

    def idle(self):
        """True when no file waits in the drop Inbox or the handler's Inbox (removed after each exit)."""
        for d in (self.inbox, self.container_inbox):
            try:
                with os.scandir(d) as it:
                    if next(it, None) is not None:
                        return False
            except FileNotFoundError:
                pass
        return True

    def wait_idle(self, timeout, poll=0.002):
        deadline = time.monotonic() + timeout
        while not self.idle():
            if time.monotonic() > deadline:
                raise SystemExit("timed out waiting for the agent to finish")
            time.sleep(poll)
        return time.monotonic()

    def proc_status(self):
        values = {}
        with open("/proc/%d/status" % self.process.pid) as f:
            for line in f:
                key, _, value = line.partition(":")
                values[key] = value.strip()
        return values

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=60)


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def parse_compare(values):
    """The --compare LABEL=PATH binaries, in the order given, after the main inboxd (labelled inboxd)."""
    binaries = []
    for value in values:
        label, sep, path = value.partition("=")
        if not sep or not label or not path:
            raise SystemExit("--compare wants LABEL=PATH, not %r" % value)
        if label == "inboxd" or label in [other for other, _ in binaries]:
            raise SystemExit("--compare: the label %r is taken" % label)
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            raise SystemExit("--compare %s: %s is not an executable file" % (label, path))
        binaries.append((label, os.path.abspath(path)))
    return binaries


def turn(count, r):
    """The order of the inboxd binaries in round r: it turns by one each round, so that none always
    runs right after the baseline."""
    return [(r + k) % count for k in range(count)]


def compared(args, figures, key):
    """The figures of each --compare binary (figures[0] is the main inboxd's), with the ratio of its
    `key` to the main inboxd's, computed before `key` is rounded."""
    result = {}
    for i, (label, binary) in enumerate(args.binaries[1:], 1):
        figure = dict(figures[i], inboxd=binary)
        figure[key + "_to_main"] = round(figures[i][key] / figures[0][key], 2)
        figure[key] = round(figure[key])
        result[label] = figure
    return result


def bench_latency(args, tools):
    """Alternates rounds of the baseline and of inboxd (and of each --compare binary, the inboxd
    binaries in turn), so that drift in the machine's load (these are shared virtual machines) falls on all
    alike; the medians are over all rounds."""
    fifo = os.path.join(args.workdir, "latency.fifo")
    os.mkfifo(fifo)
    os.chmod(fifo, 0o666)
    reader = os.open(fifo, os.O_RDWR)  # held open: handlers never block, reads never see EOF
    stream = os.fdopen(reader, "r", buffering=1)
    env = dict(os.environ, STAMP_LOG=fifo)
    # One agent per binary, each on its own directories; only one at a time has work.
    agents = [Agent(binary, os.path.join(args.workdir, "latency%d" % i), tools["stamp"], "Environment=STAMP_LOG=" + fifo)
              for i, (_, binary) in enumerate(args.binaries)]
    for agent in agents:
        names = agent.stage(args.latency_count, "l")  # the same names for each
    rounds = max(1, args.rounds)
    per_round = max(1, args.latency_count // rounds)
    base, samples = [], [[] for _ in agents]
    for r in range(rounds):
        baseline = subprocess.run([tools["baseline"], "latency", str(per_round), tools["stamp"]],
                                  env=env, capture_output=True, text=True, check=True)
        base += [int(x) / 1000 for x in baseline.stdout.split()]
        for i in turn(len(agents), r):
            agent, ours = agents[i], samples[i]
            for name in names[r * per_round:(r + 1) * per_round]:
                agent.wait_idle(10, poll=0.001)
                t0 = time.monotonic_ns()
                agent.drop(name)
                if not select.select([stream], [], [], 30)[0]:
                    raise SystemExit("no handler started within 30 s of dropping %s" % name)
                line = stream.readline()
                stamped, started = line.split()
                assert stamped == name, (stamped, name)
                ours.append((int(started) - t0) / 1000)
            agent.wait_idle(10)
    for agent in agents:
        agent.stop()
    stream.close()
    median_base = statistics.median(base)
    figures = [{"median_us": statistics.median(ours), "p90_us": round(percentile(ours, 0.9)),
                "ratio": round(statistics.median(ours) / median_base, 2)} for ours in samples]
    result = {
        "count": len(samples[0]), "rounds": rounds,
        "posix_spawn_median_us": round(median_base), "posix_spawn_p90_us": round(percentile(base, 0.9)),
        "inboxd_median_us": round(figures[0]["median_us"]), "inboxd_p90_us": figures[0]["p90_us"],
        "ratio": figures[0]["ratio"], "target_ratio": 1.5,
    }
    if len(agents) > 1:
        result["compared"] = compared(args, figures, "median_us")
    return result


def bench_throughput(args, tools):
    """Alternates baseline and inboxd runs (and runs of each --compare binary, the inboxd binaries in
    turn); reports the median rate of each."""
    base, rates = [], [[] for _ in args.binaries]
    for r in range(max(1, args.rounds)):
        base.append(float(subprocess.run([tools["baseline"], "throughput", str(args.burst_count), "2", "/bin/true"],
                                         capture_output=True, text=True, check=True).stdout))
        for i in turn(len(args.binaries), r):
            agent = Agent(args.binaries[i][1], os.path.join(args.workdir, "throughput%d.%d" % (r, i)), "/bin/true")
            names = agent.stage(args.burst_count)
            t0 = time.monotonic()
            for name in names:
                agent.drop(name)
            t1 = agent.wait_idle(600)
            agent.stop()
            rates[i].append(args.burst_count / (t1 - t0))
    median_base = statistics.median(base)
    figures = [{"per_s": statistics.median(ours), "ratio": round(statistics.median(ours) / median_base, 2)} for ours in rates]
    result = {"count": args.burst_count, "rounds": len(rates[0]), "posix_spawn_2_workers_per_s": round(median_base),
              "inboxd_per_s": round(figures[0]["per_s"]), "ratio": figures[0]["ratio"], "target_ratio": 0.8}
    if len(args.binaries) > 1:
        result["compared"] = compared(args, figures, "per_s")
    return result


def bench_big_burst(args, tools, inboxd, name="burst"):
    log = os.path.join(args.workdir, name + ".log")
    open(log, "w").close()
    os.chmod(log, 0o666)
    agent = Agent(inboxd, os.path.join(args.workdir, name), tools["stamp"], "Environment=STAMP_LOG=" + log)
    rss_start = agent.proc_status()["VmRSS"]
    names = agent.stage(args.big_count, "b")
    t0 = time.monotonic()
    for name in names:
        agent.drop(name)
    t1 = agent.wait_idle(1800)
    with open(log) as f:
        handled = [line.split()[0] for line in f]
    leftovers = {d: len(os.listdir(os.path.join(agent.state, d))) for d in ("failed", "unhandled")}
    rss_after = agent.proc_status()["VmRSS"]

    # Idle: no wake-ups but the watchdog (none is asked for here), so no context switches at all. The window
    # opens 2 s after the burst, once the agent's one clean-up after falling idle (malloc_trim, at 1 s) is done.
    time.sleep(2)
    before = agent.proc_status()
    time.sleep(args.idle_seconds)
    after = agent.proc_status()
    rss_idle = after["VmRSS"]
    switches = sum(int(after[k]) - int(before[k]) for k in ("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches"))
    agent.stop()
    return {
        "burst": {"count": args.big_count, "handled": len(handled), "unique": len(set(handled)),
                  "lost": args.big_count - len(set(handled)), "handled_twice": len(handled) - len(set(handled)),
                  "failed": leftovers["failed"], "unhandled": leftovers["unhandled"],
                  "seconds": round(t1 - t0, 2), "per_s": round(args.big_count / (t1 - t0))},
        "idle": {"seconds": args.idle_seconds, "wakeups": switches, "rss_at_start": rss_start,
                 "rss_after_burst": rss_after, "rss_idle": rss_idle, "target_rss": "12 MB"},
    }


def kb(vm):
    """A /proc/PID/status size ("11320 kB") in kB."""
    return int(vm.split()[0])


def bench_big_bursts(args, tools):
    """The burst and idle figures of the main inboxd, then of each --compare binary: one run each, one
    after the other (a run takes a minute), so the ratios to the main inboxd are of single runs."""
    runs = [bench_big_burst(args, tools, binary, "burst%d" % i) for i, (_, binary) in enumerate(args.binaries)]
    results = runs[0]
    if len(runs) > 1:
        results["burst"]["compared"] = compared(args, [run["burst"] for run in runs], "per_s")
        results["idle"]["compared"] = {label: dict(run["idle"], inboxd=binary, rss_idle_to_main=round(kb(run["idle"]["rss_idle"]) / kb(runs[0]["idle"]["rss_idle"]), 2))
                                       for (label, binary), run in zip(args.binaries[1:], runs[1:])}
    return results


def bench_resolution(args):
    """Type resolution per file with many registrations loaded (bench/resolution/main.swift), on the corpus."""
    corpus = os.path.join(args.workdir, "corpus")
    subprocess.run([args.corpus_script, corpus], check=True, stdout=subprocess.DEVNULL)
    out = subprocess.run([args.resolution_bench, "--inboxd", args.inboxd, "--corpus", corpus, "--registrations", str(args.registrations),
                          "--rounds", str(args.resolution_rounds), "--json"], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--inboxd", required=True)
    parser.add_argument("--tools", required=True, help="directory with stamp and spawn-baseline")
    parser.add_argument("--latency-count", type=int, default=300)
    parser.add_argument("--burst-count", type=int, default=10000)
    parser.add_argument("--big-count", type=int, default=50000)
    parser.add_argument("--idle-seconds", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds of baseline and inboxd")
    parser.add_argument("--resolution-bench", help="the inboxd-bench-resolution binary")
    parser.add_argument("--corpus-script", help="Tests/Corpus/make-corpus")
    parser.add_argument("--registrations", type=int, default=5000)
    parser.add_argument("--resolution-rounds", type=int, default=20)
    parser.add_argument("--only", choices=["latency", "throughput", "burst", "resolution"])
    parser.add_argument("--compare", action="append", default=[], metavar="LABEL=PATH",
                        help="another inboxd binary to run beside the main one (repeatable); not for resolution")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    args.binaries = [("inboxd", args.inboxd)] + parse_compare(args.compare)
    beside = "" if len(args.binaries) == 1 else ", each by %s" % ", ".join(label for label, _ in args.binaries)
    tools = {"stamp": os.path.join(args.tools, "stamp"), "baseline": os.path.join(args.tools, "spawn-baseline")}
    results = {}
    with tempfile.TemporaryDirectory(prefix="inboxd-bench-", dir="/var/tmp") as workdir:
        try:
            args.workdir = workdir
            if args.only in (None, "latency"):
                print("latency: %d single arrivals%s..." % (args.latency_count, beside), file=sys.stderr)
                results["latency"] = bench_latency(args, tools)
            if args.only in (None, "throughput"):
                print("throughput: a burst of %d files to /bin/true%s..." % (args.burst_count, beside), file=sys.stderr)
                results["throughput"] = bench_throughput(args, tools)
            if args.only in (None, "burst"):
                print("burst: %d files at once, then %d s idle%s..." % (args.big_count, args.idle_seconds, beside), file=sys.stderr)
                results.update(bench_big_bursts(args, tools))
            if args.only in (None, "resolution") and args.resolution_bench:
                print("resolution: %d registrations, the corpus..." % args.registrations, file=sys.stderr)
                results["resolution"] = bench_resolution(args)
        finally:
            for agent in RUNNING:
                if agent.process.poll() is None:
                    agent.process.kill()
                    agent.process.wait()
    if args.json:
        print(json.dumps(results, indent=2))
        return
    if "latency" in results:
        r = results["latency"]
        print("arrival -> handler start (%d files, %d rounds): inboxd median %d us (p90 %d), posix_spawn median %d us (p90 %d): "
              "%.2fx (target <= %.1fx)" % (r["count"], r["rounds"], r["inboxd_median_us"], r["inboxd_p90_us"],
                                           r["posix_spawn_median_us"], r["posix_spawn_p90_us"], r["ratio"], r["target_ratio"]))
        for label, c in r.get("compared", {}).items():
            print("  %s: median %d us (p90 %d): %.2fx posix_spawn; %.2fx inboxd's median"
                  % (label, c["median_us"], c["p90_us"], c["ratio"], c["median_us_to_main"]))
    if "throughput" in results:
        r = results["throughput"]
        print("burst throughput (%d files, median of %d): inboxd %d files/s, two-worker posix_spawn %d/s: "
              "%.2fx (target >= %.1fx)" % (r["count"], r["rounds"], r["inboxd_per_s"], r["posix_spawn_2_workers_per_s"], r["ratio"], r["target_ratio"]))
        for label, c in r.get("compared", {}).items():
            print("  %s: %d files/s: %.2fx two-worker posix_spawn; %.2fx inboxd's rate" % (label, c["per_s"], c["ratio"], c["per_s_to_main"]))
    if "burst" in results:
        r = results["burst"]
        print("%d-file burst: %d handled, %d lost, %d handled twice, %d failed, %d unhandled, %.1f s (%d files/s)"
              % (r["count"], r["unique"], r["lost"], r["handled_twice"], r["failed"], r["unhandled"], r["seconds"], r["per_s"]))
        for label, c in r.get("compared", {}).items():
            print("  %s: %d handled, %d lost, %d handled twice, %d failed, %d unhandled, %.1f s (%d files/s; %.2fx inboxd's)"
                  % (label, c["unique"], c["lost"], c["handled_twice"], c["failed"], c["unhandled"], c["seconds"], c["per_s"], c["per_s_to_main"]))
        r = results["idle"]
        print("idle %d s: %d wake-ups; resident memory %s at start, %s right after the burst, %s idle (target <= %s)"
              % (r["seconds"], r["wakeups"], r["rss_at_start"], r["rss_after_burst"], r["rss_idle"], r["target_rss"]))
        for label, c in r.get("compared", {}).items():
            print("  %s: %d wake-ups; resident memory %s at start, %s right after the burst, %s idle (%.2fx inboxd's)"
                  % (label, c["wakeups"], c["rss_at_start"], c["rss_after_burst"], c["rss_idle"], c["rss_idle_to_main"]))
    if "resolution" in results:
        r = results["resolution"]
        print("type resolution, %d registrations (loaded in %d ms), %d files x %d resolutions:"
              % (r["registrations"], r["load_ms"], r["files"], r["resolutions"]))
        for step in r["steps"]:
            print("  %-36s median %7.1f us, p99 %7.1f us" % (step["step"], step["median_us"], step["p99_us"]))


if __name__ == "__main__":
    main()
