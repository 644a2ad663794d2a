#!/usr/bin/env python3
"""inboxd benchmarks against its targets (docs/design.md, Targets), with the peers in the same run.

Run through bench/run, which builds everything first. Every scenario runs the same handler work for
every subject (bench/stamp.c, or bench/resident-stamp.c for a resident handler), in alternating
rounds so that drift in the machine's load falls on all alike:

  latency     arrival (rename into the Inbox) -> handler start, p50/p90/p95: a plain posix_spawn of
              the handler, inboxd, inboxd with a resident handler (-> the handler has the message),
              an inotifywait | while read loop, incrond
  throughput  a burst of --burst-count files: a two-worker posix_spawn loop, inboxd, inboxd resident,
              inboxd with %F batches, the loop, incrond; files handled, lost and handled twice
  burst       --big-count files at once, far past the inotify queue (inboxd, the loop, incrond):
              none lost, none handled twice; then idle wake-ups and the memory of every process the
              agent keeps
  resident    the resident subjects only (latency, throughput against posix_spawn and incrond,
              memory of the agent, its sniffer and its instances)
  batch       the %F subject only, against the two-worker loop
  resolution  type resolution per file with many registrations (bench/resolution/main.swift)

The resident and batch subjects need an agent that knows Activation=resident and %F; one that does
not is detected with a probe file and the subject is skipped with the reason.

--compare LABEL=PATH (repeatable) runs another inboxd binary beside the main one, e.g. the build
before a change: in the same alternating rounds for latency and throughput, once after the main one
for burst and idle, with its ratio to the same peers and to the main inboxd.
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
SCENARIOS = ["latency", "throughput", "burst", "resident", "batch", "resolution"]

RUNNING = []  # what this run started and must stop if a benchmark fails half-way (agents and peers)


class Unsupported(Exception):
    """The agent under test does not support what a subject needs (resident handlers, %F)."""


class Lines:
    """The stamp lines handlers write, read as they come: from a FIFO held open (O_RDWR, so that
    handlers never block and reads never see EOF) or from a regular file as it grows."""

    def __init__(self, path, fifo):
        self.path, self.fifo = path, fifo
        if fifo:
            os.mkfifo(path)
        else:
            open(path, "w").close()
        os.chmod(path, 0o666)  # handlers run under identities of their own
        self.fd = os.open(path, os.O_RDWR if fifo else os.O_RDONLY)
        self.buffer = b""

    def next(self, timeout):
        """The next line split in fields, or None after timeout seconds."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            if self.fifo:
                if not select.select([self.fd], [], [], left)[0]:
                    return None
            chunk = os.read(self.fd, 65536)
            if not chunk and not self.fifo:
                time.sleep(0.001)
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line.decode(errors="replace").split()

    def all(self):
        """Every line of the regular file from its start."""
        with open(self.path, errors="replace") as f:
            return [line.split() for line in f if line.strip()]

    def size(self):
        return os.stat(self.path).st_size

    def close(self):
        os.close(self.fd)


def stage(staging, count, prefix):
    names = ["%s%d.txt" % (prefix, i) for i in range(count)]
    for name in names:
        os.close(os.open(os.path.join(staging, name), os.O_CREAT | os.O_WRONLY, 0o644))
    return names


class Agent:
    """One inboxd on a private Inbox, state directory and handlers.d, with one registration."""

    def __init__(self, inboxd, workdir, exec_line, keys=()):
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
            f.write("[Handler]\nIdentifier=bench.handler\nExec=%s\n%sReadWritePaths=%s\n"
                    "[DocumentType]\nContentTypes=public.plain-text\nRank=Owner\n"
                    % (exec_line, "".join(key + "\n" for key in keys), os.path.dirname(workdir)))
        self.container_inbox = os.path.join(self.state, "containers", "bench.handler", "Inbox")
        self.stderr_path = os.path.join(workdir, "agent.stderr")
        with open(self.stderr_path, "w") as stderr:
            self.process = subprocess.Popen(
                [inboxd, "--inbox", self.inbox, "--handlers", handlers, "--state", self.state,
                 "--runtime-dir", self.runtime, "--defaults", os.path.join(workdir, "none.conf")],
                stdout=subprocess.DEVNULL, stderr=stderr)
        RUNNING.append(self)
        status = os.path.join(self.runtime, "status.json")
        deadline = time.monotonic() + 30
        while not os.path.exists(status):
            if time.monotonic() > deadline or self.process.poll() is not None:
                with open(self.stderr_path, errors="replace") as f:
                    sys.stderr.write(f.read()[-2000:])
                raise SystemExit("%s did not start" % inboxd)
            time.sleep(0.01)

    @property
    def pid(self):
        return self.process.pid

    def stage(self, count, prefix="f"):
        return stage(self.staging, count, prefix)

    def drop(self, name):
        os.rename(os.path.join(self.staging, name), os.path.join(self.inbox, name))

    def idle(self):
        """True when no file waits in the drop Inbox or the handler's Inbox (removed after each delivery)."""
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

    def set_aside(self, name):
        """Where the agent put name if it did not deliver it: 'failed' or 'unhandled', else None."""
        for d in ("failed", "unhandled"):
            try:
                if any(entry.startswith(name.rsplit(".", 1)[0]) for entry in os.listdir(os.path.join(self.state, d))):
                    return d
            except FileNotFoundError:
                pass
        return None

    def leftovers(self):
        return {d: len(os.listdir(os.path.join(self.state, d))) if os.path.isdir(os.path.join(self.state, d)) else 0
                for d in ("failed", "unhandled")}

    def proc_status(self):
        return proc_status(self.pid)

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=60)
        RUNNING.remove(self)

    def kill(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def proc_status(pid):
    values = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            key, _, value = line.partition(":")
            values[key] = value.strip()
    return values


def kb(vm):
    """A /proc/PID/status size ("11320 kB") in kB."""
    return int(vm.split()[0])


def cpu_seconds(pid):
    """User and system CPU time of pid (not of its children), or None."""
    if pid is None:
        return None
    try:
        with open("/proc/%d/stat" % pid) as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def journald_pid():
    """The running systemd-journald's pid (the one the agent logs to), or None."""
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open("/proc/%s/comm" % entry) as f:
                    if f.read().strip() == "systemd-journal":
                        return int(entry)
            except OSError:
                pass
    return None


def descendants(root):
    """The pids below root, from the parent pids in /proc/*/stat."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open("/proc/%s/stat" % entry) as f:
                    stat = f.read()
                parents[int(entry)] = int(stat[stat.rindex(")") + 2:].split()[1])
            except (OSError, ValueError):
                pass
    found, frontier = [], [root]
    while frontier:
        parent = frontier.pop()
        children = sorted(pid for pid, ppid in parents.items() if ppid == parent)
        found += children
        frontier += children
    return found


def memory(agent_pid, tools):
    """Resident set size and proportional set size of the agent and of every process below it, each
    named by its role (agent, sniffer, resident instance, or the program's name)."""
    rows = []
    for pid in [agent_pid] + descendants(agent_pid):
        try:
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                argv = [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
            rss = kb(proc_status(pid)["VmRSS"])
            pss = None
            try:
                with open("/proc/%d/smaps_rollup" % pid) as f:
                    for line in f:
                        if line.startswith("Pss:"):
                            pss = int(line.split()[1])
            except OSError:
                pass
        except (OSError, KeyError):
            continue  # gone meanwhile
        if pid == agent_pid:
            role = "agent"
        elif "--content-sniffer" in argv:
            role = "sniffer"
        elif argv and os.path.basename(argv[0]) == "resident-stamp":
            role = "resident instance"
        else:
            role = os.path.basename(argv[0]) if argv else "?"
        rows.append({"role": role, "pid": pid, "rss_kb": rss, "pss_kb": pss})
    return rows


# ---- subjects: what is measured, each with the same handler work ------------------------------------

class InboxdSubject:
    """inboxd with one registration: launched per file (mode launch), a resident handler (resident),
    or %F batches (batch)."""
    kind = "inboxd"
    retry_probe = False

    def __init__(self, label, binary, mode, tools, args):
        self.label, self.binary, self.mode, self.tools, self.args = label, binary, mode, tools, args
        self.agent = None

    def start(self, workdir, log):
        if self.mode == "launch":
            exec_line, keys = self.tools["stamp"], []
        elif self.mode == "resident":
            exec_line = self.tools["resident-stamp"]
            keys = ["Activation=resident", "Instances=%d" % self.args.resident_instances,
                    "MaxInFlight=%d" % self.args.max_in_flight]
        else:
            exec_line, keys = self.tools["stamp"] + " --batch %F", ["BatchSize=%d" % self.args.batch_size]
        self.agent = Agent(self.binary, workdir, exec_line, keys + ["Environment=STAMP_LOG=" + log])

    def stage(self, count, prefix):
        return self.agent.stage(count, prefix)

    def drop(self, name):
        self.agent.drop(name)

    def ready_for_next(self):
        self.agent.wait_idle(10, poll=0.001)

    def finish(self, lines, names, prefix, settle):
        """Waits until the burst is through; returns when, in time.monotonic() seconds."""
        return self.agent.wait_idle(1800)

    def unsupported(self, fields, probe):
        """Why the probe's outcome says the agent lacks this mode, or None."""
        if fields and fields[0] == "!launched":
            return ("the agent launched the resident handler once per file (%s): it does not know Activation=resident"
                    % " ".join(fields[1:]))
        if fields and fields[0] == "%F":
            return "the agent passed %F to the handler literally: it does not know %F"
        where = self.agent.set_aside(probe)
        if where == "unhandled":
            return ("the probe file went to unhandled/: the agent did not accept the registration (it says why in "
                    "a warning: journalctl -t inboxd)")
        if where == "failed":
            raise SystemExit("%s: the probe file went to failed/: the handler failed (journalctl -t inboxd -t bench.handler)"
                             % self.label)
        return None

    def stop(self):
        if self.agent:
            self.agent.stop()
            self.agent = None


class LoopSubject:
    """The shell idiom: inotifywait -m | while read, one handler at a time; no rescan after an
    inotify queue overflow, no clean-up (the files stay in its Inbox)."""
    kind = "peer"
    label = "inotifywait loop"
    retry_probe = False
    SCRIPT = ('inotifywait -m -e moved_to --format %f "$1" 2>"$2" | '
              'while IFS= read -r f; do "$3" "$f" "$4"; done')

    def __init__(self, tools):
        self.tools = tools
        self.process = None

    def start(self, workdir, log):
        self.inbox, self.staging = os.path.join(workdir, "Inbox"), os.path.join(workdir, "staging")
        for d in (self.inbox, self.staging):
            os.makedirs(d)
        errors = os.path.join(workdir, "inotifywait.stderr")
        open(errors, "w").close()
        env = {k: v for k, v in os.environ.items() if not k.startswith("INBOX_")}
        self.process = subprocess.Popen(["bash", "-c", self.SCRIPT, "loop", self.inbox, errors, self.tools["stamp"], log],
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, env=env, start_new_session=True)
        RUNNING.append(self)
        deadline = time.monotonic() + 30
        while True:
            with open(errors) as f:
                if "Watches established." in f.read():
                    break
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise SystemExit("inotifywait did not start")
            time.sleep(0.01)

    def stage(self, count, prefix):
        return stage(self.staging, count, prefix)

    def drop(self, name):
        os.rename(os.path.join(self.staging, name), os.path.join(self.inbox, name))

    def ready_for_next(self):
        pass

    def finish(self, lines, names, prefix, settle):
        return wait_for_stamps(lines, len(names), prefix, settle)

    def unsupported(self, fields, probe):
        return None

    def stop(self):
        os.killpg(self.process.pid, signal.SIGTERM)  # the session this run started for the loop
        self.process.wait(timeout=30)
        RUNNING.remove(self)

    def kill(self):
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


class IncronSubject(LoopSubject):
    """incrond -n (foreground) with a system table of its own: one line, IN_MOVED_TO -> the handler,
    in a private mount namespace in which /etc/incron.d and /var/spool/incron are directories of
    this run, so the host's tables are neither read nor touched. incrond logs two syslog lines per
    file; with no /dev/log here glibc writes them to the console (LOG_CONS), which is /dev/null in
    the namespace. incrond forks a shell per event, with no limit on how many run at once."""
    label = "incrond"
    retry_probe = True  # it gives no sign of having read its table: the probe is repeated until one is handled

    def start(self, workdir, log):
        self.inbox, self.staging = os.path.join(workdir, "Inbox"), os.path.join(workdir, "staging")
        tables, spool, lock = (os.path.join(workdir, d) for d in ("incron.d", "spool", "lock"))
        for d in (self.inbox, self.staging, tables, spool, lock):
            os.makedirs(d)
        with open(os.path.join(tables, "bench"), "w") as f:
            f.write("%s IN_MOVED_TO %s $# %s\n" % (self.inbox, self.tools["stamp"], log))
        config = os.path.join(workdir, "incron.conf")
        with open(config, "w") as f:
            f.write("system_table_dir = /etc/incron.d\nuser_table_dir = /var/spool/incron\n"
                    "allowed_users = %s/allow\ndenied_users = %s/deny\nlockfile_dir = %s\nlockfile_name = incrond\n"
                    % (workdir, workdir, lock))
        for name in ("allow", "deny"):
            open(os.path.join(workdir, name), "w").close()
        script = ('mount --bind "$1" /etc/incron.d && mount --bind "$2" /var/spool/incron && '
                  '{ [ ! -e /dev/console ] || mount --bind /dev/null /dev/console; } && exec incrond -n -f "$3"')
        env = {k: v for k, v in os.environ.items() if not k.startswith("INBOX_")}
        with open(os.path.join(workdir, "incrond.stderr"), "w") as stderr:
            # unshare without --fork execs the shell, which execs incrond: self.process.pid is incrond's.
            self.process = subprocess.Popen(["unshare", "--mount", "--propagation", "private", "sh", "-c", script,
                                             "incrond", tables, spool, config],
                                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr,
                                            env=env, start_new_session=True)
        RUNNING.append(self)
        time.sleep(0.05)
        if self.process.poll() is not None:
            raise SystemExit("incrond did not start (see %s/incrond.stderr)" % workdir)


def wait_for_stamps(lines, count, prefix, settle):
    """For a peer, which keeps no record of what it missed: waits until the log has count lines of the
    burst (names starting with prefix; the probe's are not counted) or none came for settle seconds;
    returns the burst's last handler start (time.monotonic() seconds)."""
    def burst():
        return [fields for fields in lines.all() if fields[0].startswith(prefix)]

    last_size, last_change, checked = -1, time.monotonic(), -1
    while True:
        size = lines.size()
        now = time.monotonic()
        if size != last_size:
            last_size, last_change = size, now
        elif now - last_change > 0.2 and checked != size:
            checked = size
            if len(burst()) >= count:
                break
        if now - last_change > settle:
            break
        time.sleep(0.01)
    stamps = [int(fields[1]) for fields in burst() if len(fields) > 1 and fields[1].isdigit()]
    return max(stamps) / 1e9 if stamps else time.monotonic()


def probe(subject, lines):
    """Drops one file and waits for its stamp, so that the subject is known to work (and warm) before
    it is measured. Raises Unsupported with the reason when the agent lacks the subject's mode."""
    deadline = time.monotonic() + 30
    attempt = 0
    while time.monotonic() < deadline:
        name = "warm%d.txt" % attempt
        attempt += 1
        staging = subject.agent.staging if isinstance(subject, InboxdSubject) else subject.staging
        os.close(os.open(os.path.join(staging, name), os.O_CREAT | os.O_WRONLY, 0o644))
        subject.drop(name)
        wait_until = min(deadline, time.monotonic() + (1 if subject.retry_probe else 30))
        while time.monotonic() < wait_until:
            fields = lines.next(0.1)
            if fields and fields[0].startswith("warm"):
                if isinstance(subject, InboxdSubject):
                    subject.agent.wait_idle(30)
                else:
                    time.sleep(0.3)  # let a late twin of an earlier probe come and go
                drain(lines)
                return
            reason = subject.unsupported(fields, name)
            if reason:
                raise Unsupported(reason)
    raise Unsupported("the probe file was not handled within 30 s")


def drain(lines):
    while lines.next(0.05) is not None:
        pass


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
        if label in ("inboxd", "posix_spawn", "incrond", "resident", "batch") or label in [other for other, _ in binaries]:
            raise SystemExit("--compare: the label %r is taken" % label)
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            raise SystemExit("--compare %s: %s is not an executable file" % (label, path))
        binaries.append((label, os.path.abspath(path)))
    return binaries


def turn(items, r):
    """items in the order of round r: it turns by one each round, so that none always runs right
    after the baseline."""
    return [items[(r + k) % len(items)] for k in range(len(items))]


def subjects_for(args, tools, scenario):
    """The subjects of a scenario, in the order they are reported."""
    launch = [InboxdSubject(label, binary, "launch", tools, args) for label, binary in args.binaries]
    resident = InboxdSubject("inboxd resident", args.inboxd, "resident", tools, args)
    batch = InboxdSubject("inboxd %F", args.inboxd, "batch", tools, args)
    peers = [] if args.no_peers else [LoopSubject(tools), IncronSubject(tools)]
    if args.no_peers is False and not args.incrond_ok:
        peers = peers[:1]
    if scenario == "latency":
        return launch + [resident] + peers
    if scenario == "throughput":
        return launch + [resident, batch] + peers
    if scenario == "resident-latency":
        return [resident]
    if scenario == "resident-throughput":
        return [resident] + [p for p in peers if p.label == "incrond"]
    if scenario == "batch":
        return [batch]
    raise ValueError(scenario)


def fresh(subject, tools, args):
    """A new subject like this one (a peer is an object per run)."""
    if isinstance(subject, InboxdSubject):
        return InboxdSubject(subject.label, subject.binary, subject.mode, tools, args)
    return type(subject)(tools)


def bench_latency(args, tools, subjects, name="latency"):
    """Single arrivals, one at a time: rounds of the baseline and of every subject in turn; each
    subject runs all the time on directories of its own, and only one has work at a time."""
    lines = Lines(os.path.join(args.workdir, name + ".fifo"), fifo=True)
    env = dict(os.environ, STAMP_LOG=lines.path)
    skipped, active = {}, []
    for i, subject in enumerate(subjects):
        subject.start(os.path.join(args.workdir, "%s%d" % (name, i)), lines.path)
        try:
            probe(subject, lines)
            active.append(subject)
        except Unsupported as why:
            skipped[subject.label] = str(why)
            print("  %s: skipped: %s" % (subject.label, why), file=sys.stderr)
            subject.stop()
    if not active:
        lines.close()
        return {"count": 0, "rounds": 0, "subjects": {}, "skipped": skipped}
    names = {}
    for subject in active:
        names[subject.label] = subject.stage(args.latency_count, "l")
    rounds = max(1, args.rounds)
    per_round = max(1, args.latency_count // rounds)
    base, samples = [], {subject.label: [] for subject in active}
    for r in range(rounds):
        baseline = subprocess.run([tools["baseline"], "latency", str(per_round), tools["stamp"]],
                                  env=env, capture_output=True, text=True, check=True)
        base += [int(x) / 1000 for x in baseline.stdout.split()]
        for subject in turn(active, r) if active else []:
            ours = samples[subject.label]
            for file in names[subject.label][r * per_round:(r + 1) * per_round]:
                subject.ready_for_next()
                t0 = time.monotonic_ns()
                subject.drop(file)
                while True:
                    fields = lines.next(30)
                    if fields is None:
                        raise SystemExit("%s: no handler started within 30 s of dropping %s" % (subject.label, file))
                    if fields[0] == file:
                        break  # anything else is a late line of an earlier probe
                ours.append((int(fields[1]) - t0) / 1000)
            subject.ready_for_next()
            time.sleep(0.05)
            drain(lines)
    for subject in active:
        subject.stop()
    lines.close()
    figures = {"posix_spawn": dict(summary(base), kind="baseline")}
    for subject in active:
        figures[subject.label] = dict(summary(samples[subject.label]), kind=subject.kind)
    base_median = figures["posix_spawn"]["median_us"]
    for label, figure in figures.items():
        figure["to_posix_spawn"] = round(figure["median_us"] / base_median, 2)
    result = {"count": per_round * rounds, "rounds": rounds, "subjects": figures, "skipped": skipped}
    for label, figure in figures.items():
        for peer in ("inotifywait loop", "incrond"):
            if peer in figures and label != peer and figures[label].get("kind") != "peer":
                figure["to_" + peer.replace(" ", "_")] = round(figure["median_us"] / figures[peer]["median_us"], 2)
    main = figures.get("inboxd")
    for label, _ in args.binaries[1:]:
        if label in figures and main:
            figures[label]["to_main"] = round(figures[label]["median_us"] / main["median_us"], 2)
    return result


def summary(samples):
    return {"median_us": round(statistics.median(samples)), "p90_us": round(percentile(samples, 0.9)),
            "p95_us": round(percentile(samples, 0.95)), "samples": len(samples)}


def burst_once(subject, args, workdir, count, prefix, log_name):
    """One burst of count files through a fresh start of subject: figures, and the subject still running
    (the caller stops it) so that its memory can be read."""
    lines = Lines(os.path.join(workdir, log_name), fifo=False)
    subject.start(os.path.join(workdir, subject.label.replace(" ", "-").replace("%", "")), lines.path)
    probe(subject, lines)
    names = subject.stage(count, prefix)
    agent_pid = subject.agent.pid if isinstance(subject, InboxdSubject) else None
    cpu_before = cpu_seconds(agent_pid), cpu_seconds(journald_pid())
    t0 = time.monotonic()
    for name in names:
        subject.drop(name)
    t1 = subject.finish(lines, names, prefix, args.settle)
    cpu_after = cpu_seconds(agent_pid), cpu_seconds(journald_pid())
    stamped = [fields for fields in lines.all() if fields[0].startswith(prefix) or fields[0].startswith("!")]
    handled = [fields[0] for fields in stamped if fields[0].startswith(prefix)]
    unique = set(handled) & set(names)
    figure = {"count": count, "handled": len(unique), "lost": count - len(unique),
              "handled_twice": len(handled) - len(set(handled)), "seconds": round(t1 - t0, 2),
              "per_s": len(unique) / (t1 - t0) if t1 > t0 else 0.0}
    problems = [" ".join(fields) for fields in stamped if fields[0].startswith("!")]
    if problems:
        figure["handler_problems"] = len(problems)
        figure["first_problem"] = problems[0]
    if isinstance(subject, InboxdSubject):
        figure.update(subject.agent.leftovers())
        # Where the time goes: the agent's own CPU per file, and the journald's (shared with whatever
        # else logs meanwhile, so an upper bound).
        for what, before, after in zip(("agent", "journald"), cpu_before, cpu_after):
            if before is not None and after is not None:
                figure[what + "_cpu_us_per_file"] = round((after - before) * 1e6 / count)
        if subject.mode != "launch":
            # Resident: the instances that served the burst; %F: the launches it took.
            pids = {fields[2] for fields in stamped if len(fields) > 2 and fields[0] in unique}
            figure["instances" if subject.mode == "resident" else "launches"] = len(pids)
    lines.close()
    return figure


def bench_throughput(args, tools, subjects, count, name="throughput"):
    """Rounds of the two-worker posix_spawn loop and of every subject in turn, each subject started
    afresh for each burst; the median rate of each."""
    base = []
    base_log = os.path.join(args.workdir, name + "-posix_spawn.log")
    skipped, runs, memory_rows = {}, {subject.label: [] for subject in subjects}, {}
    active = list(subjects)
    rounds = max(1, args.rounds)
    for r in range(rounds):
        if not active:
            break  # every subject was skipped
        open(base_log, "w").close()
        base.append(float(subprocess.run([tools["baseline"], "throughput", str(count), "2", tools["stamp"]],
                                         env=dict(os.environ, STAMP_LOG=base_log),
                                         capture_output=True, text=True, check=True).stdout))
        for subject in turn(active, r) if active else []:
            run = fresh(subject, tools, args)
            workdir = os.path.join(args.workdir, "%s%d" % (name, r))
            os.makedirs(workdir, exist_ok=True)
            try:
                figure = burst_once(run, args, workdir, count, "f", "%s.log" % subject.label.replace(" ", "-").replace("%", ""))
            except Unsupported as why:
                skipped[subject.label] = str(why)
                print("  %s: skipped: %s" % (subject.label, why), file=sys.stderr)
                run.stop()
                active.remove(subject)
                continue
            if r == rounds - 1 and isinstance(run, InboxdSubject) and run.mode != "launch":
                time.sleep(args.memory_settle)  # the agent trims its heap once idle
                memory_rows[subject.label] = memory(run.agent.pid, tools)
            run.stop()
            runs[subject.label].append(figure)
    if not base:
        return {"count": count, "rounds": 0, "subjects": {}, "skipped": skipped}
    figures = {"posix_spawn 2 workers": {"per_s": statistics.median(base), "kind": "baseline"}}
    for subject in subjects:
        ours = runs[subject.label]
        if not ours:
            continue
        middle = sorted(ours, key=lambda f: f["per_s"])[len(ours) // 2]
        figure = dict(middle, per_s=statistics.median(f["per_s"] for f in ours), kind=subject.kind,
                      lost_per_round=[f["lost"] for f in ours])
        figures[subject.label] = figure
    base_rate = figures["posix_spawn 2 workers"]["per_s"]
    for label, figure in figures.items():
        figure["to_posix_spawn_2_workers"] = round(figure["per_s"] / base_rate, 2)
        for peer in ("inotifywait loop", "incrond"):
            if peer in figures and label != peer and figure["kind"] != "peer":
                figure["to_" + peer.replace(" ", "_")] = round(figure["per_s"] / figures[peer]["per_s"], 2)
    main = figures.get("inboxd")
    for label, _ in args.binaries[1:]:
        if label in figures and main:
            figures[label]["to_main"] = round(figures[label]["per_s"] / main["per_s"], 2)
    for figure in figures.values():
        figure["per_s"] = round(figure["per_s"])
    result = {"count": count, "rounds": rounds, "subjects": figures, "skipped": skipped}
    if memory_rows:
        result["memory"] = memory_rows
    return result


def bench_big_burst(args, tools, subject, name):
    """One burst far past the inotify queue; for inboxd also its idle wake-ups and memory afterwards."""
    workdir = os.path.join(args.workdir, name)
    os.makedirs(workdir)
    figure = burst_once(subject, args, workdir, args.big_count, "b", "burst.log")
    if not isinstance(subject, InboxdSubject):
        subject.stop()
        return figure, None
    agent = subject.agent
    rss_after = agent.proc_status()["VmRSS"]
    # Idle: no wake-ups but the watchdog (none is asked for here), so no context switches at all. The window
    # opens 2 s after the burst, once the agent's one clean-up after falling idle (malloc_trim, at 1 s) is done.
    time.sleep(2)
    before = agent.proc_status()
    time.sleep(args.idle_seconds)
    after = agent.proc_status()
    switches = sum(int(after[k]) - int(before[k]) for k in ("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches"))
    idle = {"seconds": args.idle_seconds, "wakeups": switches, "rss_after_burst": rss_after,
            "rss_idle": after["VmRSS"], "target_rss": "12 MB", "processes": memory(agent.pid, tools)}
    subject.stop()
    return figure, idle


def bench_big_bursts(args, tools):
    """The 50,000-file burst of each inboxd binary, then of each peer: one run each, one after the other
    (a run takes a minute), so the ratios are of single runs."""
    subjects = [InboxdSubject(label, binary, "launch", tools, args) for label, binary in args.binaries]
    if not args.no_peers:
        subjects += [LoopSubject(tools)] + ([IncronSubject(tools)] if args.incrond_ok else [])
    figures, idles = {}, {}
    for i, subject in enumerate(subjects):
        print("  %s..." % subject.label, file=sys.stderr)
        figure, idle = bench_big_burst(args, tools, subject, "burst%d" % i)
        figure["kind"] = subject.kind
        figures[subject.label] = figure
        if idle:
            idles[subject.label] = idle
    main = figures["inboxd"]
    for label, figure in figures.items():
        if label != "inboxd":
            figure["to_main"] = round(figure["per_s"] / main["per_s"], 2) if main["per_s"] else None
        figure["per_s"] = round(figure["per_s"])
    return {"count": args.big_count, "subjects": figures}, idles


def bench_resolution(args):
    """Type resolution per file with many registrations loaded (bench/resolution/main.swift), on the corpus."""
    corpus = os.path.join(args.workdir, "corpus")
    subprocess.run([args.corpus_script, corpus], check=True, stdout=subprocess.DEVNULL)
    out = subprocess.run([args.resolution_bench, "--inboxd", args.inboxd, "--corpus", corpus, "--registrations", str(args.registrations),
                          "--rounds", str(args.resolution_rounds), "--json"], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


# ---- targets and the report ----------------------------------------------------------------------------

def targets(results):
    """Each target of docs/design.md that this run measured: what, the figure, the bound, met or not."""
    found = []

    def ratio(what, value, bound, at_most):
        if value is not None:
            found.append({"target": what, "value": value, "bound": bound,
                          "met": value <= bound if at_most else value >= bound,
                          "text": "%.2fx (target %s %.1fx)" % (value, "<=" if at_most else ">=", bound)})

    for key in ("latency", "resident_latency"):
        subjects = results.get(key, {}).get("subjects", {})
        if "inboxd" in subjects:
            ratio("arrival -> handler start, median, inboxd / posix_spawn", subjects["inboxd"]["to_posix_spawn"], 1.5, True)
        if "inboxd resident" in subjects:
            ratio("arrival -> message received, median, inboxd resident / posix_spawn",
                  subjects["inboxd resident"]["to_posix_spawn"], 0.5, True)
    for key in ("throughput", "resident_throughput", "batch"):
        subjects = results.get(key, {}).get("subjects", {})
        if "inboxd" in subjects:
            ratio("burst, inboxd / two-worker posix_spawn", subjects["inboxd"]["to_posix_spawn_2_workers"], 0.8, False)
        if "inboxd resident" in subjects:
            ratio("burst, inboxd resident / two-worker posix_spawn", subjects["inboxd resident"]["to_posix_spawn_2_workers"], 3.0, False)
            ratio("burst, inboxd resident / incrond", subjects["inboxd resident"].get("to_incrond"), 8.0, False)
        if "inboxd %F" in subjects:
            ratio("burst, inboxd %F batches / two-worker posix_spawn", subjects["inboxd %F"]["to_posix_spawn_2_workers"], 2.0, False)
    burst = results.get("burst", {}).get("subjects", {}).get("inboxd")
    if burst:
        found.append({"target": "%d-file burst: none lost, none handled twice" % burst["count"],
                      "met": burst["lost"] == 0 and burst["handled_twice"] == 0,
                      "text": "%d lost, %d handled twice" % (burst["lost"], burst["handled_twice"])})
    idle = results.get("idle", {}).get("inboxd")
    if idle:
        found.append({"target": "idle: no wake-ups", "met": idle["wakeups"] == 0, "text": "%d in %d s" % (idle["wakeups"], idle["seconds"])})
        found.append({"target": "idle: agent resident memory <= 12 MB", "met": kb(idle["rss_idle"]) <= 12 * 1024,
                      "text": "%.1f MB" % (kb(idle["rss_idle"]) / 1024)})
    return found


PEERS = ("inotifywait loop", "incrond")


def key(peer):
    """The key of a figure's ratio to a peer: to_inotifywait_loop, to_incrond."""
    return "to_" + peer.replace(" ", "_")


def print_latency(title, r):
    if not r["subjects"]:
        for label, why in r["skipped"].items():
            print("%s: %s skipped: %s" % (title, label, why))
        return
    print("%s (%d files per subject, %d rounds; ratios of medians, below 1 is faster):" % (title, r["count"], r["rounds"]))
    for label, f in r["subjects"].items():
        parts = []
        if label != "posix_spawn":
            parts.append("%.2fx posix_spawn" % f["to_posix_spawn"])
            parts += ["%.2fx %s" % (f[key(p)], p) for p in PEERS if key(p) in f]
            if "to_main" in f:
                parts.append("%.2fx inboxd's median" % f["to_main"])
        print("  %-18s p50 %6d us  p90 %6d  p95 %6d  %s" % (label, f["median_us"], f["p90_us"], f["p95_us"], "; ".join(parts)))
    for label, why in r["skipped"].items():
        print("  %-18s skipped: %s" % (label, why))


def print_bursts(title, r):
    if not r["subjects"]:
        for label, why in r["skipped"].items():
            print("%s: %s skipped: %s" % (title, label, why))
        return
    print("%s (%d files%s; ratios of rates, above 1 is faster):"
          % (title, r["count"], ", median of %d rounds" % r["rounds"] if r.get("rounds") else ""))
    for label, f in r["subjects"].items():
        if f.get("kind") == "baseline":
            print("  %-22s %6d files/s" % (label, f["per_s"]))
            continue
        parts = []
        if "to_posix_spawn_2_workers" in f:
            parts.append("%.2fx posix_spawn" % f["to_posix_spawn_2_workers"])
        parts += ["%.2fx %s" % (f[key(p)], p) for p in PEERS if key(p) in f]
        if f.get("to_main") is not None:
            parts.append("%.2fx inboxd's rate" % f["to_main"])
        extra = "; ".join(parts)
        losses = "%d handled, %d lost, %d twice" % (f["handled"], f["lost"], f["handled_twice"])
        if "lost_per_round" in f and any(f["lost_per_round"]):
            losses += " (lost per round: %s)" % ", ".join(str(n) for n in f["lost_per_round"])
        if f.get("kind") == "inboxd":
            losses += ", %d failed, %d unhandled" % (f.get("failed", 0), f.get("unhandled", 0))
        if "instances" in f:
            losses += ", %d instance%s" % (f["instances"], "" if f["instances"] == 1 else "s")
        if f.get("launches"):
            losses += ", %d launches (%.1f files each)" % (f["launches"], f["handled"] / f["launches"])
        if "agent_cpu_us_per_file" in f:
            losses += "; CPU per file: agent %d us, journald %s us" % (f["agent_cpu_us_per_file"], f.get("journald_cpu_us_per_file", "?"))
        if "handler_problems" in f:
            losses += ", %d handler problems (first: %s)" % (f["handler_problems"], f["first_problem"])
        print("  %-22s %6d files/s  %s%s[%s, %.1f s]" % (label, f["per_s"], extra, "  " if extra else "", losses, f["seconds"]))
    for label, why in r.get("skipped", {}).items():
        print("  %-22s skipped: %s" % (label, why))


def print_memory(title, rows):
    print("  %s:" % title)
    for row in rows:
        print("    %-18s pid %-7d RSS %5.1f MB%s" % (row["role"], row["pid"], row["rss_kb"] / 1024,
                                                  "  PSS %5.1f MB" % (row["pss_kb"] / 1024) if row["pss_kb"] is not None else ""))


def report(results):
    if "latency" in results:
        print_latency("arrival -> handler start (resident: -> the handler has the message)", results["latency"])
    if "resident_latency" in results:
        print_latency("resident: arrival -> the handler has the message", results["resident_latency"])
    for key, title in (("throughput", "burst throughput"), ("resident_throughput", "resident burst"), ("batch", "%F batch burst")):
        if key in results:
            print_bursts(title, results[key])
            for label, rows in results[key].get("memory", {}).items():
                print_memory("memory of %s after the burst settled" % label, rows)
    if "burst" in results:
        print_bursts("big burst, past the inotify queue", results["burst"])
    for label, r in results.get("idle", {}).items():
        print("idle %s, %d s after the burst: %d wake-ups; agent RSS %s right after the burst, %s idle"
              % (label, r["seconds"], r["wakeups"], r["rss_after_burst"], r["rss_idle"]))
        print_memory("memory of %s after the burst settled" % label, r["processes"])
    if "resolution" in results:
        r = results["resolution"]
        print("type resolution, %d registrations (loaded in %d ms), %d files x %d resolutions:"
              % (r["registrations"], r["load_ms"], r["files"], r["resolutions"]))
        for step in r["steps"]:
            print("  %-36s median %7.1f us, p99 %7.1f us" % (step["step"], step["median_us"], step["p99_us"]))
    if results.get("targets"):
        print("targets (docs/design.md):")
        for t in results["targets"]:
            print("  %-7s %-66s %s" % ("met" if t["met"] else "MISSED", t["target"], t["text"]))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--inboxd", required=True)
    parser.add_argument("--tools", required=True, help="directory with stamp, resident-stamp and spawn-baseline")
    parser.add_argument("--latency-count", type=int, default=300)
    parser.add_argument("--burst-count", type=int, default=10000)
    parser.add_argument("--big-count", type=int, default=50000)
    parser.add_argument("--idle-seconds", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds of the baseline and every subject")
    parser.add_argument("--settle", type=float, default=5.0,
                        help="seconds without a new handler start after which a peer's burst is over (it keeps no record of what it lost)")
    parser.add_argument("--memory-settle", type=float, default=3.0, help="seconds after a resident or batch burst before memory is read")
    parser.add_argument("--resident-instances", type=int, default=1, help="Instances= of the resident registration")
    parser.add_argument("--max-in-flight", type=int, default=16, help="MaxInFlight= of the resident registration")
    parser.add_argument("--batch-size", type=int, default=64, help="BatchSize= of the %%F registration")
    parser.add_argument("--no-peers", action="store_true", help="leave out incrond and the inotifywait loop")
    parser.add_argument("--resolution-bench", help="the inboxd-bench-resolution binary")
    parser.add_argument("--corpus-script", help="Tests/Corpus/make-corpus")
    parser.add_argument("--registrations", type=int, default=5000)
    parser.add_argument("--resolution-rounds", type=int, default=20)
    parser.add_argument("--only", help="scenarios to run, comma-separated: " + ", ".join(SCENARIOS))
    parser.add_argument("--compare", action="append", default=[], metavar="LABEL=PATH",
                        help="another inboxd binary to run beside the main one (repeatable); launched handlers only")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    only = SCENARIOS if not args.only else args.only.split(",")
    for scenario in only:
        if scenario not in SCENARIOS:
            raise SystemExit("--only: %r is not one of %s" % (scenario, ", ".join(SCENARIOS)))
    if args.only is None:
        only = [s for s in SCENARIOS if s not in ("resident", "batch")]  # latency and throughput include them
    args.binaries = [("inboxd", args.inboxd)] + parse_compare(args.compare)
    tools = {name: os.path.join(args.tools, name) for name in ("stamp", "resident-stamp")}
    tools["baseline"] = os.path.join(args.tools, "spawn-baseline")
    args.incrond_ok = False
    if not args.no_peers:
        if not shutil.which("inotifywait"):
            raise SystemExit("inotifywait is missing (scripts/setup installs inotify-tools); or --no-peers")
        if not shutil.which("incrond"):
            print("incrond: skipped: it is not installed (apt-get install incron)", file=sys.stderr)
        elif os.geteuid() != 0:
            print("incrond: skipped: it runs as root, in a mount namespace of its own", file=sys.stderr)
        else:
            args.incrond_ok = True
    results = {}
    with tempfile.TemporaryDirectory(prefix="inboxd-bench-", dir="/var/tmp") as workdir:
        try:
            args.workdir = workdir
            os.chmod(workdir, 0o755)  # handlers run under identities of their own: they reach their logs below it
            if "latency" in only:
                subjects = subjects_for(args, tools, "latency")
                print("latency: %d single arrivals each: posix_spawn, %s..." % (args.latency_count, ", ".join(s.label for s in subjects)), file=sys.stderr)
                results["latency"] = bench_latency(args, tools, subjects)
            if "throughput" in only:
                subjects = subjects_for(args, tools, "throughput")
                print("throughput: bursts of %d files: two-worker posix_spawn, %s..." % (args.burst_count, ", ".join(s.label for s in subjects)), file=sys.stderr)
                results["throughput"] = bench_throughput(args, tools, subjects, args.burst_count)
            if "resident" in only:
                print("resident: %d single arrivals, bursts of %d files..." % (args.latency_count, args.burst_count), file=sys.stderr)
                results["resident_latency"] = bench_latency(args, tools, subjects_for(args, tools, "resident-latency"), "resident-latency")
                if results["resident_latency"]["skipped"]:
                    results["resident_throughput"] = {"count": args.burst_count, "rounds": 0, "subjects": {},
                                                      "skipped": results["resident_latency"]["skipped"]}
                else:
                    results["resident_throughput"] = bench_throughput(args, tools, subjects_for(args, tools, "resident-throughput"),
                                                                      args.burst_count, "resident-throughput")
            if "batch" in only:
                print("batch: bursts of %d files, BatchSize=%d..." % (args.burst_count, args.batch_size), file=sys.stderr)
                results["batch"] = bench_throughput(args, tools, subjects_for(args, tools, "batch"), args.burst_count, "batch")
            if "burst" in only:
                print("burst: %d files at once, then %d s idle..." % (args.big_count, args.idle_seconds), file=sys.stderr)
                results["burst"], results["idle"] = bench_big_bursts(args, tools)
            if "resolution" in only and args.resolution_bench:
                print("resolution: %d registrations, the corpus..." % args.registrations, file=sys.stderr)
                results["resolution"] = bench_resolution(args)
        finally:
            for started in list(RUNNING):
                started.kill()
    results["targets"] = targets(results)
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        report(results)


if __name__ == "__main__":
    main()
