"""The cluster scenario of bench.py: the same burst through a cluster of agents (README, "Many hosts, one Inbox: the
cluster") with one and two workers, beside the local path, and what the cluster adds per file.

A private nats-server, as Tests/IntegrationTests/NatsServer.swift starts its own: JetStream on (-js), its store in the
run's directory, listening on 127.0.0.1 at a port the kernel chose (-p -1, read back from the ports file it writes in
--ports_file_dir), stopped by its PID. Every agent is bench.py's Agent with an inboxd.conf (--config) and the same one
registration, the stamp handler launched per file (bench.handler, public.data, Rank=Owner): the ingest host chooses the
handler with its own registrations, and a worker runs only a handler registered on itself. All on this machine, so the
cluster's figures are its own cost (publishing, the server, pulling, the copy in and out of the object store) with no
network in it; two workers share the machine's cores with the ingest host and the server.

The subjects, in --rounds rounds whose order turns by one each round; each starts afresh for each round (a new cluster
Name=, so that nothing of an earlier round is in its streams):

  local      one agent, no cluster: the throughput scenario's inboxd
  cluster-1  an ingest agent ([Cluster] Work=no, Inboxes= its Inbox) and one worker (Work=yes)
  cluster-2  the same ingest agent and two workers

Each waits until every agent's status.json says its cluster child is connected, then handles one probe file (so that
it is known to work, and is warm). Then a burst of --cluster-count files, staged and renamed into the (ingest) Inbox at
once, each file's rename time taken just before its rename; the burst is over when every file's handler has started
(the stamps), or when none has started for BURST_QUIET seconds (the rest are lost). Once every agent is idle again,
--cluster-latency-count / rounds single files, one at a time, each after the previous one's delivery ended.

The figures: files/s from the first rename to the last handler start (median of the rounds); arrival -> handler start
p50/p99 over the burst's files and over the single files (all rounds' samples); the CPU time per file of every
process the subject keeps (the agents, their children -- the cluster child, the sniffer -- and nats-server; the
handlers' own processes are the same for all and not counted), read from /proc before the burst and once all is idle
after it, with its split by role; journald's apart (it includes whatever else logged meanwhile). Each cluster subject's
ratios to local round by round (the spread), and what the cluster adds per file: its CPU per file minus local's (per
round, the median), its p50 minus local's.
"""
import json
import os
import signal
import statistics
import subprocess
import time

NATS_SERVER = "/usr/sbin/nats-server"
LOCAL = "local"
SUBJECTS = (LOCAL, "cluster-1", "cluster-2")
WORKERS = {LOCAL: 0, "cluster-1": 1, "cluster-2": 2}
BURST_QUIET = 60  # seconds without a new handler start after which a burst's missing files count as lost


class Failed(Exception):
    pass


# ---- pure helpers --------------------------------------------------------------------------------------------

def agent_config(inbox, url, name, host, work):
    """The inboxd.conf of one agent of the cluster: its Inbox, the server, the cluster's name, its host name; the
    ingest agent (work False) sends its Inbox's arrivals to the cluster and runs no handler itself."""
    lines = ["[Agent]", "Inbox=" + inbox, "", "[Cluster]", "Servers=" + url, "Name=" + name, "Host=" + host,
             "Work=" + ("yes" if work else "no")]
    if not work:
        lines.append("Inboxes=" + inbox)
    return "\n".join(lines) + "\n"


def server_url(ports_text):
    """The nats:// URL in a nats-server ports file ({"nats":["nats://127.0.0.1:PORT"], ...}), or None."""
    try:
        urls = json.loads(ports_text).get("nats") or []
    except (ValueError, AttributeError):
        return None
    return urls[0] if urls and isinstance(urls[0], str) and urls[0].startswith("nats://") else None


def arrivals(dropped, stamps, prefix):
    """Arrival -> handler start of a burst. dropped: {name: rename time, monotonic ns}; stamps: the log's lines split
    in fields (name, monotonic ns). Returns (microseconds of each file handled, by its first start; names handled;
    starts beyond the first of a file, i.e. handled twice; the last start in ns or None)."""
    first, twice = {}, 0
    for fields in stamps:
        if len(fields) < 2 or not fields[0].startswith(prefix) or fields[0] not in dropped or not fields[1].isdigit():
            continue
        if fields[0] in first:
            twice += 1
            continue
        first[fields[0]] = int(fields[1])
    samples = [(started - dropped[name]) / 1000 for name, started in first.items()]
    return samples, set(first), twice, (max(first.values()) if first else None)


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def role_of(owner, argv):
    """The role of a process the subject keeps: the agent itself (owner: agent, ingest, worker), or its child."""
    if not argv:
        return owner
    if os.path.basename(argv[0]) == "inboxd-cluster":
        return owner + " cluster child"
    if "--content-sniffer" in argv:
        return owner + " sniffer"
    return owner + " " + os.path.basename(argv[0])


def cpu_per_file(before, after, count):
    """Microseconds of CPU per file by role, from {pid: (role, seconds)} before and after (a pid gone meanwhile or
    unreadable is left out), and their total."""
    by_role = {}
    for pid, (role, seconds) in before.items():
        if pid in after and seconds is not None and after[pid][1] is not None:
            by_role[role] = by_role.get(role, 0.0) + after[pid][1] - seconds
    split = {role: round(seconds * 1e6 / count) for role, seconds in sorted(by_role.items())}
    return split, round(sum(by_role.values()) * 1e6 / count)


def figures(runs):
    """Per subject, from its rounds (runs: {subject: [round record or None]}, a round record as burst_and_singles
    returns it, the same round index for every subject): the median rate, p50/p99 of all rounds' samples, the median
    CPU per file and its split; for a cluster subject its ratios to local (of medians, and round by round) and what
    it adds per file."""
    out = {}
    for subject, rounds in runs.items():
        done = [r for r in rounds if r]
        if not done:
            continue
        burst = [x for r in done for x in r["burst_us"]]
        singles = [x for r in done for x in r["singles_us"]]
        f = {"per_s": round(statistics.median(r["per_s"] for r in done), 1), "rounds": [round(r["per_s"], 1) for r in done],
             "handled": sum(r["handled"] for r in done), "lost": sum(r["lost"] for r in done),
             "handled_twice": sum(r["twice"] for r in done), "seconds": round(statistics.median(r["seconds"] for r in done), 2),
             "cpu_us_per_file": round(statistics.median(r["cpu_us_per_file"] for r in done)),
             "cpu_us_per_file_by_role": {role: round(statistics.median(r["cpu_split"].get(role, 0) for r in done))
                                         for role in sorted({role for r in done for role in r["cpu_split"]})}}
        if burst:
            f["burst_p50_us"], f["burst_p99_us"] = round(statistics.median(burst)), round(percentile(burst, 0.99))
        if singles:
            f["latency_p50_us"], f["latency_p99_us"] = round(statistics.median(singles)), round(percentile(singles, 0.99))
            f["latency_samples"] = len(singles)
        journald = [r["journald_us_per_file"] for r in done if r.get("journald_us_per_file") is not None]
        if journald:
            f["journald_cpu_us_per_file"] = round(statistics.median(journald))
        out[subject] = f
    local = out.get(LOCAL)
    for subject, f in out.items():
        if subject == LOCAL or not local:
            continue
        pairs = [(ours, theirs) for ours, theirs in zip(runs[subject], runs[LOCAL]) if ours and theirs]
        f["to_local"] = round(f["per_s"] / local["per_s"], 2) if local["per_s"] else None
        f["rounds_to_local"] = [round(ours["per_s"] / theirs["per_s"], 3) for ours, theirs in pairs if theirs["per_s"]]
        adds = {"cpu_us_per_file": round(statistics.median(ours["cpu_us_per_file"] - theirs["cpu_us_per_file"]
                                                           for ours, theirs in pairs)) if pairs else None}
        for what in ("latency", "burst"):
            if what + "_p50_us" in f and what + "_p50_us" in local:
                adds[what + "_p50_us"] = f[what + "_p50_us"] - local[what + "_p50_us"]
        if "latency_p50_us" in f and local.get("latency_p50_us"):
            f["latency_to_local"] = round(f["latency_p50_us"] / local["latency_p50_us"], 2)
            f["rounds_latency_to_local"] = [round(statistics.median(ours["singles_us"]) / statistics.median(theirs["singles_us"]), 3)
                                            for ours, theirs in pairs if ours["singles_us"] and theirs["singles_us"]]
        f["adds"] = adds
    return out


def ratios_by_round(results):
    """The cluster subjects' ratios to local round by round, for bench.py's --record and regression warning:
    {key: (rounds, 'higher'|'lower')}."""
    found = {}
    for subject, f in (results or {}).get("subjects", {}).items():
        if f.get("rounds_to_local"):
            found["cluster/%s burst" % subject] = (f["rounds_to_local"], "higher")
        if f.get("rounds_latency_to_local"):
            found["cluster/%s latency" % subject] = (f["rounds_latency_to_local"], "lower")
    return found


# ---- the private nats-server ----------------------------------------------------------------------------------

class NatsServer:
    """nats-server -js of this run: store, ports file and log under root, on 127.0.0.1 at a port the kernel chose."""

    def __init__(self, root):
        self.root = root
        os.makedirs(os.path.join(root, "store"), exist_ok=True)
        self.log = os.path.join(root, "server.log")
        self.process = subprocess.Popen([NATS_SERVER, "-js", "-sd", os.path.join(root, "store"), "-a", "127.0.0.1",
                                         "-p", "-1", "--ports_file_dir", root, "-l", self.log],
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                        start_new_session=True)
        ports = os.path.join(root, "nats-server_%d.ports" % self.process.pid)
        deadline = time.monotonic() + 20
        self.url = None
        while self.url is None:
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise Failed("nats-server did not write %s within 20 s (see %s)" % (ports, self.log))
            try:
                with open(ports) as f:
                    self.url = server_url(f.read())
            except OSError:
                pass
            time.sleep(0.02)

    @property
    def pid(self):
        return self.process.pid

    def stop(self):
        """SIGTERM to the nats-server this run started (its PID only), SIGKILL if it has not ended within 10 s."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


# ---- a subject: its agents ------------------------------------------------------------------------------------

class Subject:
    """One round's agents of a subject: the local agent, or an ingest agent and its workers, on directories under
    root, each with the stamp registration writing to root/stamps.log (the registration's ReadWritePaths= is root)."""

    def __init__(self, label, kit, args, tools, root, server):
        self.label, self.kit = label, kit
        self.log = os.path.join(root, "stamps.log")
        self.lines = kit.Lines(self.log, fifo=False)
        exec_line, keys = tools["stamp"], ["Environment=STAMP_LOG=" + self.log]
        self.agents = []  # (owner, Agent): the one that takes the files first
        try:
            if label == LOCAL:
                self.agents.append(("agent", kit.Agent(args.inboxd, os.path.join(root, "agent"), exec_line, keys)))
                return
            name = "bench%08x" % int.from_bytes(os.urandom(4), "big")
            for index in range(WORKERS[label] + 1):
                host = "ingest" if index == 0 else "worker-%d" % index
                directory = os.path.join(root, host)
                config = agent_config(os.path.join(directory, "Inbox"), server.url, name, host, work=index > 0)
                self.agents.append(("ingest" if index == 0 else "worker",
                                    kit.Agent(args.inboxd, directory, exec_line, keys, config=config)))
            self.wait_connected(30)
        except BaseException:
            self.stop()
            raise

    @property
    def intake(self):
        return self.agents[0][1]

    def wait_connected(self, timeout):
        """Until every agent's status.json says its cluster child is connected to the server."""
        deadline = time.monotonic() + timeout
        for owner, agent in self.agents:
            while True:
                state = cluster_state(agent)
                if state.get("connected"):
                    break
                if time.monotonic() > deadline:
                    raise Failed("%s: the cluster is not connected after %d s (%s; see %s)"
                                 % (owner, timeout, state.get("error") or "no error reported", agent.stderr_path))
                time.sleep(0.02)

    def idle(self):
        """No file waits in a drop Inbox, a handler's Inbox or the ingest agent's outbox."""
        for _, agent in self.agents:
            if not agent.idle():
                return False
        outbox = os.path.join(self.intake.state, "outbox")
        return not (os.path.isdir(outbox) and os.listdir(outbox))

    def wait_idle(self, timeout):
        deadline = time.monotonic() + timeout
        while not self.idle():
            if time.monotonic() > deadline:
                raise Failed("the agents are not idle after %d s" % timeout)
            time.sleep(0.002)

    def processes(self, server):
        """{pid: role} of every process this subject keeps: the agents, their children, the server."""
        found = {}
        for owner, agent in self.agents:
            found[agent.pid] = owner
            for pid in self.kit.descendants(agent.pid):
                found[pid] = role_of(owner, argv_of(pid))
        if server and self.label != LOCAL:
            found[server.pid] = "nats-server"
        return found

    def next_stamp(self, name, timeout):
        """Waits for the stamp of name (others are skipped): its fields, or None after timeout seconds."""
        deadline = time.monotonic() + timeout
        while True:
            fields = self.lines.next(max(0.0, deadline - time.monotonic()))
            if fields is None or fields[0] == name:
                return fields

    def probe(self):
        """One file through, so that the subject is known to work and is warm."""
        names = self.intake.stage(1, "warm")
        self.intake.drop(names[0])
        if self.next_stamp(names[0], 30) is None:
            where = self.intake.set_aside(names[0])
            raise Failed("the probe file was not handled within 30 s%s" % (": it went to %s/" % where if where else ""))
        self.wait_idle(60)

    def stop(self):
        for _, agent in reversed(self.agents):
            agent.stop()
        self.agents = []
        self.lines.close()


def argv_of(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
    except OSError:
        return []


def cluster_state(agent):
    """The cluster's state in the agent's status.json ({} until there is one)."""
    try:
        with open(os.path.join(agent.runtime, "status.json")) as f:
            return (json.load(f).get("cluster") or {}).get("state") or {}
    except (OSError, ValueError):
        return {}


def burst_and_singles(subject, server, kit, count, singles, files):
    """One round of a started and probed subject: the burst, then the single files. A round record."""
    roles = subject.processes(server)

    def cpu():
        return {pid: (role, kit.cpu_seconds(pid)) for pid, role in roles.items()}

    journald = kit.journald_pid()
    names = subject.intake.stage(count, "c", files)
    before, journald_before = cpu(), kit.cpu_seconds(journald)
    dropped = {}
    for name in names:
        dropped[name] = time.monotonic_ns()
        subject.intake.drop(name)
    # Until every file's handler has started, or none has for BURST_QUIET seconds.
    last_size, last_change, checked = -1, time.monotonic(), -1
    while True:
        size = subject.lines.size()
        if size != last_size:
            last_size, last_change = size, time.monotonic()
        elif checked != size and time.monotonic() - last_change > 0.05:
            checked = size
            if len(arrivals(dropped, subject.lines.all(), "c")[1]) >= count:
                break
        if time.monotonic() - last_change > BURST_QUIET:
            break
        time.sleep(0.01)
    burst_us, handled, twice, last = arrivals(dropped, subject.lines.all(), "c")
    subject.wait_idle(600)
    time.sleep(0.3)  # the answers after the last delivery: the worker's ack, the content's deletion
    after, journald_after = cpu(), kit.cpu_seconds(journald)
    split, total = cpu_per_file(before, after, count)
    first = min(dropped.values())
    seconds = (last - first) / 1e9 if last else 0.0
    record = {"per_s": len(handled) / seconds if seconds > 0 else 0.0, "seconds": seconds, "handled": len(handled),
              "lost": count - len(handled), "twice": twice, "burst_us": burst_us, "cpu_split": split, "cpu_us_per_file": total,
              "journald_us_per_file": round((journald_after - journald_before) * 1e6 / count)
              if journald_before is not None and journald_after is not None else None}
    # The single files: each renamed in once the previous one's delivery has ended everywhere.
    while subject.lines.next(0.02) is not None:
        pass  # the burst's lines
    record["singles_us"] = []
    for name in subject.intake.stage(singles, "s", files):
        subject.wait_idle(60)
        t0 = time.monotonic_ns()
        subject.intake.drop(name)
        fields = subject.next_stamp(name, 30)
        if fields is None:
            raise Failed("no handler started within 30 s of dropping %s" % name)
        record["singles_us"].append((int(fields[1]) - t0) / 1000)
    subject.wait_idle(60)
    return record


def turn(items, r):
    return [items[(r + k) % len(items)] for k in range(len(items))]


def bench_cluster(args, workdir, tools, kit, files):
    """The cluster scenario: {"count", "latency_count", "rounds", "subjects": {subject: figure}, "skipped": {...}}.
    kit: bench.py's Agent (with config=), Lines, cpu_seconds, descendants and journald_pid."""
    rounds = max(1, args.rounds)
    results = {"count": args.cluster_count, "rounds": rounds, "latency_count": (args.cluster_latency_count // rounds) * rounds,
               "content": files.kind, "subjects": {}, "skipped": {}}
    if not os.path.exists(NATS_SERVER):
        results["scenario_skipped"] = "missing %s (nats-server; scripts/setup installs it)" % NATS_SERVER
        return results
    child = os.path.join(os.path.dirname(args.inboxd), "inboxd-cluster")
    if not os.access(child, os.X_OK):
        results["scenario_skipped"] = "no inboxd-cluster beside %s (bench/run builds it)" % args.inboxd
        return results
    root = os.path.join(workdir, "cluster")
    os.makedirs(root)
    server = NatsServer(os.path.join(root, "nats"))
    runs = {subject: [] for subject in SUBJECTS}
    try:
        for r in range(rounds):
            for label in turn(list(SUBJECTS), r):
                if label in results["skipped"]:
                    runs[label].append(None)
                    continue
                directory = os.path.join(root, "r%d-%s" % (r, label))
                os.makedirs(directory)
                os.chmod(directory, 0o755)  # handlers run under identities of their own: they write the stamps here
                subject = None
                try:
                    subject = Subject(label, kit, args, tools, directory, server)
                    subject.probe()
                    runs[label].append(burst_and_singles(subject, server, kit, args.cluster_count,
                                                         args.cluster_latency_count // rounds, files))
                except Failed as why:
                    results["skipped"][label] = "round %d: %s" % (r + 1, why)
                    runs[label].append(None)
                finally:
                    if subject:
                        subject.stop()
    finally:
        server.stop()
    for label in results["skipped"]:
        runs[label] = [None] * rounds  # one that failed in a later round is not measured at all
    results["subjects"] = figures(runs)
    return results


# ---- the report ------------------------------------------------------------------------------------------------

def report(results):
    if results.get("scenario_skipped"):
        print("cluster: skipped: %s" % results["scenario_skipped"])
        return
    print("cluster, the same %d-file burst (%s files) through a cluster on this machine, nats-server on 127.0.0.1, %d round%s; "
          "%d single files each; ratios to local (rates: above 1 is faster; latencies: below 1 is faster):"
          % (results["count"], results["content"], results["rounds"], "" if results["rounds"] == 1 else "s",
             results["latency_count"]))
    for subject, f in results["subjects"].items():
        parts = []
        if f.get("to_local") is not None:
            parts.append("%.2fx local" % f["to_local"])
            if len(f.get("rounds_to_local", [])) > 1:
                parts.append("rounds %.2f-%.2fx" % (min(f["rounds_to_local"]), max(f["rounds_to_local"])))
        elif len(f["rounds"]) > 1:
            parts.append("rounds %.1f-%.1f files/s" % (min(f["rounds"]), max(f["rounds"])))
        print("  %-10s %7.1f files/s  %s[%d handled, %d lost, %d twice, %.2f s]"
              % (subject, f["per_s"], "; ".join(parts) + "  " if parts else "", f["handled"], f["lost"], f["handled_twice"],
                 f["seconds"]))
        latency = []
        if "burst_p50_us" in f:
            latency.append("in the burst p50 %d us, p99 %d" % (f["burst_p50_us"], f["burst_p99_us"]))
        if "latency_p50_us" in f:
            one = "single files p50 %d us, p99 %d" % (f["latency_p50_us"], f["latency_p99_us"])
            if f.get("latency_to_local") is not None:
                one += " (%.2fx local%s)" % (f["latency_to_local"], "; rounds %.2f-%.2fx" % (
                    min(f["rounds_latency_to_local"]), max(f["rounds_latency_to_local"]))
                    if len(f.get("rounds_latency_to_local", [])) > 1 else "")
            latency.append(one)
        print("             arrival -> handler start: %s" % "; ".join(latency))
        print("             CPU per file %d us: %s; journald %s us"
              % (f["cpu_us_per_file"], ", ".join("%s %d" % item for item in f["cpu_us_per_file_by_role"].items()),
                 f.get("journald_cpu_us_per_file", "?")))
    adds = [(subject, f["adds"]) for subject, f in results["subjects"].items() if "adds" in f]
    if adds:
        print("  what the cluster adds per file, against local in the same rounds:")
        for subject, a in adds:
            parts = []
            if a.get("cpu_us_per_file") is not None:
                parts.append("%+d us CPU" % a["cpu_us_per_file"])
            if "latency_p50_us" in a:
                parts.append("%+d us p50 of a single file" % a["latency_p50_us"])
            if "burst_p50_us" in a:
                parts.append("%+d us p50 in the burst" % a["burst_p50_us"])
            print("    %-10s %s" % (subject, ", ".join(parts)))
    for subject, why in results.get("skipped", {}).items():
        print("  %-10s skipped: %s" % (subject, why))
