#!/usr/bin/env python3
"""inboxd benchmarks against its targets (docs/design.md, Targets), with the peers in the same run.

Run through bench/run, which builds everything first. Every scenario runs the same handler work for
every subject (bench/stamp.c, or bench/resident-stamp.c for a resident handler), in alternating
rounds so that drift in the machine's load falls on all alike:

  latency     arrival (rename into the Inbox) -> handler start, p50/p90/p95/p99: a plain posix_spawn of
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
  content     launched and resident bursts of each of --content-kinds side by side in the same rounds
              (empty, 65 bytes of text named .txt, the same bytes with no extension, 2 KiB of random
              bytes with no extension): what typing by content costs a delivery
  resolution  type resolution per file with many registrations (bench/resolution/main.swift)
  preview     Quick Look's time to first picture against the tool it runs (bench/preview.py): a PDF page, a JPEG,
              a picture on a terminal, a Word document through LibreOffice
  print       arrival -> job accepted by a private cupsd (bench/printing.py): lp and inboxctl print --no-wait per
              file beside a print hot folder (Print=), on a multi-page PDF and a text file
  cluster     the same burst through a cluster on this machine (bench/cluster.py): a private nats-server, an ingest
              agent and one or two workers, beside one agent alone; files/s, arrival -> handler start p50/p99 in the
              burst and of single files, CPU per file, and what the cluster adds per file

Every scenario but content and resolution runs once for each of --contents (default mix,empty): the
realistic mix is the test corpus (Tests/Corpus/make-corpus, made once and kept while the script is
unchanged), dropped in a fixed shuffled order; the targets are the first content's.

Each inboxd figure keeps its ratio to the baseline round by round. --record writes them to
bench/figures.json; every run compares with that file and warns of a scenario whose ratio is worse
than the recorded one by more than the rounds' spread.

The resident and batch subjects need an agent that knows Activation=resident and %F; one that does
not is detected with a probe file and the subject is skipped with the reason.

--compare LABEL=PATH (repeatable) runs another inboxd binary beside the main one, e.g. the build
before a change: in the same alternating rounds for latency, throughput and content, once after the
main one for burst and idle, with its ratio to the same peers and to the main inboxd.
"""
import argparse
import hashlib
import json
import os
import random
import select
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import types

import cluster
import preview
import printing

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCENARIOS = ["latency", "throughput", "burst", "resident", "batch", "content", "resolution", "preview", "print", "cluster"]

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


# ---- what is dropped ------------------------------------------------------------------------------------

CONTENTS = ["mix", "empty", "text", "text-bare", "binary-bare", "text-bare-kinds"]
CONTENT_TEXT = {
    "mix": "the realistic mix (the test corpus: photos, PDFs, Office files, text, archives, fonts, unknown binary, "
           "misnamed and bare files)",
    "empty": "empty files named .txt",
    "text": "65 bytes of text named .txt (typed by its name)",
    "text-bare": "65 bytes of text without an extension (typed by its content)",
    "binary-bare": "2 KiB of random bytes without an extension (typed by its content)",
    "text-bare-kinds": "the bare text, with a second registration claiming a kind of text (public.python-script), "
                       "so that libmagic's database classifies it",
}
# What the agent of text-bare-kinds also has registered: it never gets these files (they are plain text), but its
# claim makes a kind of text matter to the decision.
KINDS_REGISTRATION = ("[Handler]\nIdentifier=bench.scripts\nExec=/bin/true %f\n\n"
                      "[DocumentType]\nContentTypes=public.python-script\n")
MIX_SIZE_LIMIT = 256 * 1024  # corpus files above it (a font) are left out of the mix: 50,000 files stay small


class Files:
    """The files a burst drops, one kind of content: their names and bytes, file i of a burst the same in
    every round and for every subject."""

    def __init__(self, kind, corpus=None):
        self.kind = kind
        self.corpus = corpus or []  # (name, bytes) for the mix, in a fixed shuffled order

    def name(self, prefix, i):
        if self.kind == "mix":
            return "%s%d-%s" % (prefix, i, self.corpus[i % len(self.corpus)][0])
        return "%s%d%s" % (prefix, i, ".txt" if self.kind in ("empty", "text") else "")

    def data(self, i):
        if self.kind == "empty":
            return b""
        if self.kind in ("text", "text-bare", "text-bare-kinds"):
            return ("inboxd benchmark file %08d: one line of plain text, no more.\n" % i)[:64].encode() + b"\n"
        if self.kind == "binary-bare":
            return random.Random(i).randbytes(2048)
        return self.corpus[i % len(self.corpus)][1]


def load_mix(corpus_script, cache_root="/var/tmp"):
    """The mix corpus: made once by the test corpus's script (Tests/Corpus/make-corpus) into a directory named
    after the script's digest, and reused while the script is unchanged; then every file under MIX_SIZE_LIMIT,
    in a shuffled order fixed by a seed, names made safe for a shell line (incrond's)."""
    with open(corpus_script, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:16]
    directory = os.path.join(cache_root, "inboxd-bench-mix-" + digest)
    if not os.path.exists(os.path.join(directory, "expected.tsv")):
        partial = directory + ".partial"
        shutil.rmtree(partial, ignore_errors=True)
        print("mix: making the corpus with %s into %s" % (corpus_script, directory), file=sys.stderr)
        subprocess.run([corpus_script, partial], check=True, stdout=subprocess.DEVNULL)
        os.rename(partial, directory)
    files = []
    for name in sorted(os.listdir(directory)):
        path = os.path.join(directory, name)
        if name == "expected.tsv" or not os.path.isfile(path) or os.path.getsize(path) > MIX_SIZE_LIMIT:
            continue
        with open(path, "rb") as f:
            files.append(("".join(c if c.isalnum() or c in "._-" else "_" for c in name), f.read()))
    random.Random(20261201).shuffle(files)
    return directory, files


def stage(staging, count, prefix, files=None):
    files = files or Files("empty")
    names = [files.name(prefix, i) for i in range(count)]
    for i, name in enumerate(names):
        fd = os.open(os.path.join(staging, name), os.O_CREAT | os.O_WRONLY, 0o644)
        data = files.data(i)
        if data:
            os.write(fd, data)
        os.close(fd)
    return names


class Agent:
    """One inboxd on a private Inbox, state directory and handlers.d, with one registration."""

    def __init__(self, inboxd, workdir, exec_line, keys=(), registration=None, identifier="bench.handler", env=None,
                 config=None, others=None):
        """registration: the text of its one registration (with that identifier) instead of bench.handler's;
        config: the text of an inboxd.conf for it (--config), e.g. its [Cluster]; others: more registrations, by
        identifier."""
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
        with open(os.path.join(handlers, identifier + ".handler"), "w") as f:
            # The handler writes its stamps beside the agent's directories: allowed by its sandbox.
            f.write(registration or "[Handler]\nIdentifier=bench.handler\nExec=%s\n%sReadWritePaths=%s\n"
                    "[DocumentType]\nContentTypes=public.data\nRank=Owner\n"
                    % (exec_line, "".join(key + "\n" for key in keys), os.path.dirname(workdir)))
        for other, text in (others or {}).items():
            with open(os.path.join(handlers, other + ".handler"), "w") as f:
                f.write(text)
        self.container_inbox = os.path.join(self.state, "containers", identifier, "Inbox")
        self.stderr_path = os.path.join(workdir, "agent.stderr")
        argv = [inboxd, "--inbox", self.inbox, "--handlers", handlers, "--state", self.state,
                "--runtime-dir", self.runtime, "--defaults", os.path.join(workdir, "none.conf")]
        if config is not None:
            with open(os.path.join(workdir, "inboxd.conf"), "w") as f:
                f.write(config)
            argv += ["--config", os.path.join(workdir, "inboxd.conf")]
        with open(self.stderr_path, "w") as stderr:
            self.process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=stderr, env=env)
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

    def stage(self, count, prefix="f", files=None):
        return stage(self.staging, count, prefix, files)

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

    def __init__(self, label, binary, mode, tools, args, files=None):
        self.label, self.binary, self.mode, self.tools, self.args = label, binary, mode, tools, args
        self.files = files  # what this subject's bursts drop when it is not the scenario's (the content scenario)
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
        kinds = self.files is not None and self.files.kind == "text-bare-kinds"
        self.agent = Agent(self.binary, workdir, exec_line, keys + ["Environment=STAMP_LOG=" + log],
                           others={"bench.scripts": KINDS_REGISTRATION} if kinds else None)

    def stage(self, count, prefix, files=None):
        return self.agent.stage(count, prefix, files)

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

    def stage(self, count, prefix, files=None):
        return stage(self.staging, count, prefix, files)

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
        return InboxdSubject(subject.label, subject.binary, subject.mode, tools, args, subject.files)
    return type(subject)(tools)


def bench_latency(args, tools, subjects, name="latency", files=None):
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
        names[subject.label] = subject.stage(args.latency_count, "l", files)
    rounds = max(1, args.rounds)
    per_round = max(1, args.latency_count // rounds)
    base, samples = [], {subject.label: [] for subject in active}
    base_rounds, round_medians = [], {subject.label: [] for subject in active}
    for r in range(rounds):
        baseline = subprocess.run([tools["baseline"], "latency", str(per_round), tools["stamp"]],
                                  env=env, capture_output=True, text=True, check=True)
        this_round = [int(x) / 1000 for x in baseline.stdout.split()]
        base += this_round
        base_rounds.append(statistics.median(this_round))
        for subject in turn(active, r) if active else []:
            ours = samples[subject.label]
            first = len(ours)
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
            round_medians[subject.label].append(statistics.median(ours[first:]) / base_rounds[-1])
            subject.ready_for_next()
            time.sleep(0.05)
            drain(lines)
    for subject in active:
        subject.stop()
    lines.close()
    figures = {"posix_spawn": dict(summary(base), kind="baseline")}
    for subject in active:
        figures[subject.label] = dict(summary(samples[subject.label]), kind=subject.kind,
                                      rounds_to_posix_spawn=[round(x, 3) for x in round_medians[subject.label]])
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
            "p95_us": round(percentile(samples, 0.95)), "p99_us": round(percentile(samples, 0.99)),
            "samples": len(samples)}


def sniffer_pid(agent_pid):
    """The agent's content sniffer child, or None."""
    for pid in descendants(agent_pid):
        try:
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                if b"--content-sniffer" in f.read().split(b"\0"):
                    return pid
        except OSError:
            pass
    return None


def burst_once(subject, args, workdir, count, prefix, log_name, files=None):
    """One burst of count files through a fresh start of subject: figures, and the subject still running
    (the caller stops it) so that its memory can be read."""
    lines = Lines(os.path.join(workdir, log_name), fifo=False)
    subject.start(os.path.join(workdir, subject.label.replace(" ", "-").replace("%", "")), lines.path)
    probe(subject, lines)
    names = subject.stage(count, prefix, getattr(subject, "files", None) or files)
    agent_pid = subject.agent.pid if isinstance(subject, InboxdSubject) else None
    sniffer = sniffer_pid(agent_pid) if agent_pid else None
    cpu_before = cpu_seconds(agent_pid), cpu_seconds(journald_pid()), cpu_seconds(sniffer)
    t0 = time.monotonic()
    for name in names:
        subject.drop(name)
    t1 = subject.finish(lines, names, prefix, args.settle)
    cpu_after = cpu_seconds(agent_pid), cpu_seconds(journald_pid()), cpu_seconds(sniffer)
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
        # The sniffer's is its child's (a child replaced meanwhile is not counted).
        for what, before, after in zip(("agent", "journald", "sniffer"), cpu_before, cpu_after):
            if before is not None and after is not None:
                figure[what + "_cpu_us_per_file"] = round((after - before) * 1e6 / count)
        if subject.mode != "launch":
            # Resident: the instances that served the burst; %F: the launches it took.
            pids = {fields[2] for fields in stamped if len(fields) > 2 and fields[0] in unique}
            figure["instances" if subject.mode == "resident" else "launches"] = len(pids)
    lines.close()
    return figure


def bench_throughput(args, tools, subjects, count, name="throughput", files=None):
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
                figure = burst_once(run, args, workdir, count, "f", "%s.log" % subject.label.replace(" ", "-").replace("%", ""),
                                    files)
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
            figure["to_posix_spawn_this_round"] = figure["per_s"] / base[-1]
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
                      lost_per_round=[f["lost"] for f in ours],
                      rounds_to_posix_spawn=[round(f["to_posix_spawn_this_round"], 3) for f in ours])
        figure.pop("to_posix_spawn_this_round", None)
        for what in ("agent", "journald", "sniffer"):
            values = [f[what + "_cpu_us_per_file"] for f in ours if what + "_cpu_us_per_file" in f]
            if values:
                figure[what + "_cpu_us_per_file_range"] = [min(values), max(values)]
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


def bench_content(args, tools):
    """Launched (and resident) bursts of files typed by their name and by their content, side by side in the same
    rounds: each kind of --content-kinds for each inboxd binary (resident: the main one), against the two-worker
    loop. The case that shows what content typing costs a delivery."""
    subjects = []
    for mode in args.content_modes:
        binaries = args.binaries if mode == "launch" else args.binaries[:1]
        for label, binary in binaries:
            for kind in args.content_kinds:
                name = "%s%s %s" % (label, "" if mode == "launch" else " resident", kind)
                subjects.append(InboxdSubject(name, binary, mode, tools, args, Files(kind)))
    result = bench_throughput(args, tools, subjects, args.content_count, "content")
    figures = result["subjects"]
    for label, _ in args.binaries[1:]:
        for kind in args.content_kinds:
            ours, main = figures.get("%s %s" % (label, kind)), figures.get("inboxd %s" % kind)
            if ours and main and main["per_s"]:
                ours["to_main"] = round(ours["per_s"] / main["per_s"], 2)
    result["kinds"] = {kind: CONTENT_TEXT[kind] for kind in args.content_kinds}
    return result


def bench_big_burst(args, tools, subject, name, files=None):
    """One burst far past the inotify queue; for inboxd also its idle wake-ups and memory afterwards."""
    workdir = os.path.join(args.workdir, name)
    os.makedirs(workdir)
    figure = burst_once(subject, args, workdir, args.big_count, "b", "burst.log", files)
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


def bench_big_bursts(args, tools, files=None, tag=""):
    """The 50,000-file burst of each inboxd binary, then of each peer: one run each, one after the other
    (a run takes a minute), so the ratios are of single runs."""
    subjects = [InboxdSubject(label, binary, "launch", tools, args) for label, binary in args.binaries]
    if not args.no_peers:
        subjects += [LoopSubject(tools)] + ([IncronSubject(tools)] if args.incrond_ok else [])
    figures, idles = {}, {}
    for i, subject in enumerate(subjects):
        print("  %s..." % subject.label, file=sys.stderr)
        figure, idle = bench_big_burst(args, tools, subject, "burst%s%d" % (tag, i), files)
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

def targets(results, empty=None, content=None):
    """Each target of docs/design.md that this run measured, on the first of --contents (the mix by default): what,
    the figure, the bound, met or not. empty: the empty files' results, for the mix's resident burst against
    theirs."""
    found = []

    def ratio(what, value, bound, at_most, extra=""):
        if value is not None:
            found.append({"target": what, "value": value, "bound": bound,
                          "met": value <= bound if at_most else value >= bound,
                          "text": "%.2fx (target %s %.1fx)%s" % (value, "<=" if at_most else ">=", bound, extra)})

    def p99(f, base):
        return "; p99 %d us against %d us" % (f["p99_us"], base["p99_us"]) if "p99_us" in f and "p99_us" in base else ""

    for key in ("latency", "resident_latency"):
        subjects = results.get(key, {}).get("subjects", {})
        base = subjects.get("posix_spawn", {})
        if "inboxd" in subjects:
            ratio("arrival -> handler start, median, inboxd / posix_spawn", subjects["inboxd"]["to_posix_spawn"], 1.5, True,
                  p99(subjects["inboxd"], base))
        if "inboxd resident" in subjects:
            ratio("arrival -> message received, median, inboxd resident / posix_spawn",
                  subjects["inboxd resident"]["to_posix_spawn"], 0.5, True, p99(subjects["inboxd resident"], base))
    for key in ("throughput", "resident_throughput", "batch"):
        subjects = results.get(key, {}).get("subjects", {})
        if "inboxd" in subjects:
            ratio("burst, inboxd / two-worker posix_spawn", subjects["inboxd"]["to_posix_spawn_2_workers"], 0.8, False)
        if "inboxd resident" in subjects:
            resident = subjects["inboxd resident"]
            ratio("burst, inboxd resident / two-worker posix_spawn", resident["to_posix_spawn_2_workers"], 3.0, False)
            ratio("burst, inboxd resident / incrond", resident.get("to_incrond"), 8.0, False)
            if "agent_cpu_us_per_file" in resident:
                span = resident.get("agent_cpu_us_per_file_range", [resident["agent_cpu_us_per_file"]] * 2)
                found.append({"target": "agent CPU per resident delivery <= 100 us", "value": resident["agent_cpu_us_per_file"],
                              "met": resident["agent_cpu_us_per_file"] <= 100,
                              "text": "%d us (rounds %d-%d; journald %s us, sniffer %s us)"
                                      % (resident["agent_cpu_us_per_file"], span[0], span[1],
                                         resident.get("journald_cpu_us_per_file", "?"), resident.get("sniffer_cpu_us_per_file", "?"))})
        if "inboxd %F" in subjects:
            ratio("burst, inboxd %F batches / two-worker posix_spawn", subjects["inboxd %F"]["to_posix_spawn_2_workers"], 2.5, False)
    if empty is not None and empty is not results:
        for key in ("throughput", "resident_throughput"):
            ours = results.get(key, {}).get("subjects", {}).get("inboxd resident")
            theirs = empty.get(key, {}).get("subjects", {}).get("inboxd resident")
            if ours and theirs and theirs["to_posix_spawn_2_workers"]:
                # Separate runs: each rate as a ratio to the two-worker loop of its own rounds, so that drift between them cancels.
                ratio("resident burst, these files / empty files (each to its posix_spawn)",
                      round(ours["to_posix_spawn_2_workers"] / theirs["to_posix_spawn_2_workers"], 2), 0.8, False,
                      " (%d against %d files/s)" % (ours["per_s"], theirs["per_s"]))
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
    if content:
        subjects = content.get("subjects", {})
        for mode in ("inboxd", "inboxd resident"):
            named, bare = subjects.get(mode + " text"), subjects.get(mode + " text-bare")
            if named and bare and named["per_s"]:
                # Not a target of the design: what typing by content costs beside typing by name, same bytes, same rounds.
                found.append({"target": "%s: 65 bytes bare / named .txt (content typing's cost)" % mode,
                              "value": round(bare["per_s"] / named["per_s"], 2), "met": bare["per_s"] / named["per_s"] >= 0.8,
                              "text": "%.2fx (%d against %d files/s; sniffer %s us per file; target >= 0.8x)"
                                      % (bare["per_s"] / named["per_s"], bare["per_s"], named["per_s"],
                                         bare.get("sniffer_cpu_us_per_file", "?"))})
    return found


# ---- recorded figures and the regression warning ---------------------------------------------------------

def ratios_by_round(results):
    """Every inboxd subject's ratios to its baseline, round by round: {key: (rounds, 'higher'|'lower', text)}.
    Ratios to the baseline of the same rounds, not rates: they carry over from one run to another far better,
    since the baseline slows down with the machine."""
    found = {}
    scenarios = [("%s/%s" % (content, key), r) for content, by in results.get("contents", {}).items() for key, r in by.items()
                 if isinstance(r, dict) and "subjects" in r]
    if results.get("content"):
        scenarios.append(("content", results["content"]))
    for where, r in scenarios:
        for label, f in r["subjects"].items():
            if label.startswith("inboxd") and f.get("rounds_to_posix_spawn"):
                better = "lower" if "median_us" in f else "higher"
                found["%s/%s" % (where, label)] = (f["rounds_to_posix_spawn"], better)
    # The cluster's subjects against local in the same rounds.
    found.update(cluster.ratios_by_round(results.get("cluster")))
    return found


def load_recorded(path):
    if not path or not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def regressions(results, recorded):
    """A line for every scenario whose ratio to its baseline is worse than the recorded one by more than the rounds'
    spread (the larger of this run's and the recorded run's: max - min over the rounds)."""
    if not recorded:
        return []
    lines = []
    for key, (rounds, better) in sorted(ratios_by_round(results).items()):
        old = recorded.get("figures", {}).get(key)
        if not old or not old.get("rounds"):
            continue
        now, then = statistics.median(rounds), statistics.median(old["rounds"])
        spread = max(max(rounds) - min(rounds), max(old["rounds"]) - min(old["rounds"]))
        worse = now > then + spread if better == "lower" else now < then - spread
        if worse:
            lines.append("%s is slower than recorded (%s, %s): %.2fx the baseline against %.2fx, beyond the rounds' spread of %.2f"
                         % (key, recorded.get("date", "?"), recorded.get("commit", "?")[:12], now, then, spread))
    return lines


def record(results, path, args):
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    figures = {key: {"rounds": rounds, "median": statistics.median(rounds), "better": better}
               for key, (rounds, better) in sorted(ratios_by_round(results).items())}
    with open(path, "w") as f:
        json.dump({"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "commit": commit,
                   "command": "bench/bench.py " + " ".join(sys.argv[1:]), "figures": figures,
                   "targets": results.get("targets", [])}, f, indent=1)
        f.write("\n")


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
        spread = f.get("rounds_to_posix_spawn")
        if spread and len(spread) > 1:
            parts.append("rounds %.2f-%.2fx" % (min(spread), max(spread)))
        print("  %-18s p50 %6d us  p90 %6d  p95 %6d  p99 %6d  %s"
              % (label, f["median_us"], f["p90_us"], f["p95_us"], f["p99_us"], "; ".join(parts)))
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
            spread = f.get("rounds_to_posix_spawn")
            if spread and len(spread) > 1:
                parts.append("rounds %.2f-%.2fx" % (min(spread), max(spread)))
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
            span = f.get("agent_cpu_us_per_file_range")
            losses += "; CPU per file: agent %d us%s, sniffer %s us, journald %s us" % (
                f["agent_cpu_us_per_file"], " (%d-%d)" % tuple(span) if span and span[0] != span[1] else "",
                f.get("sniffer_cpu_us_per_file", "?"), f.get("journald_cpu_us_per_file", "?"))
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
    for content, by in results.get("contents", {}).items():
        print("== %s: %s" % (content, results["content_text"][content]))
        report_scenarios(by)
    if "content" in results:
        r = results["content"]
        print("== content typing: %s" % "; ".join("%s: %s" % item for item in r["kinds"].items()))
        print_bursts("bursts by kind of file", r)
    if "resolution" in results:
        r = results["resolution"]
        print("type resolution, %d registrations (loaded in %d ms), %d files x %d resolutions:"
              % (r["registrations"], r["load_ms"], r["files"], r["resolutions"]))
        for step in r["steps"]:
            print("  %-36s median %7.1f us, p99 %7.1f us" % (step["step"], step["median_us"], step["p99_us"]))
    if "preview" in results:
        preview.report(results["preview"])
    if "print" in results:
        printing.report(results["print"])
    if "cluster" in results:
        cluster.report(results["cluster"])
    if results.get("targets"):
        print("targets (docs/design.md)%s; ratios within one run:"
              % (", on %s files" % results["targets_content"] if results.get("targets_content") else ""))
        for t in results["targets"]:
            print("  %-7s %-66s %s" % ("met" if t["met"] else "MISSED", t["target"], t["text"]))


def report_scenarios(results):
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
    parser.add_argument("--inboxctl", help="the inboxctl binary, for the preview scenario")
    parser.add_argument("--preview-corpus-script", help="Tests/PreviewCorpus/make-corpus, for the preview scenario")
    parser.add_argument("--preview-runs", type=int, default=7, help="runs of each subject of the preview scenario")
    parser.add_argument("--office-runs", type=int, default=3, help="runs of each LibreOffice subject of the preview scenario")
    parser.add_argument("--print-count", type=int, default=40, help="files of each kind per subject and round of the print scenario")
    parser.add_argument("--print-pages", type=int, default=8, help="pages of the print scenario's PDF")
    parser.add_argument("--print-text-lines", type=int, default=100, help="lines of the print scenario's text file")
    parser.add_argument("--cluster-count", type=int, default=2000, help="files per burst of the cluster scenario")
    parser.add_argument("--cluster-latency-count", type=int, default=100,
                        help="single files per subject of the cluster scenario, over all rounds")
    parser.add_argument("--cluster-content", default="text", choices=CONTENTS,
                        help="the files the cluster scenario drops (default text: 65 bytes named .txt)")
    parser.add_argument("--only", help="scenarios to run, comma-separated: " + ", ".join(SCENARIOS))
    parser.add_argument("--compare", action="append", default=[], metavar="LABEL=PATH",
                        help="another inboxd binary to run beside the main one (repeatable); launched handlers only")
    parser.add_argument("--contents", default="mix,empty",
                        help="the files every scenario but content and resolution drops, comma-separated, each in runs of "
                             "its own; the targets are the first's (default mix,empty): " + ", ".join(CONTENTS))
    parser.add_argument("--content-kinds", default="empty,text,text-bare,binary-bare,text-bare-kinds",
                        help="the kinds of the content scenario, side by side in the same rounds")
    parser.add_argument("--content-modes", default="launch,resident", help="launch, resident or both, for the content scenario")
    parser.add_argument("--content-count", type=int, default=3000, help="files per burst of the content scenario")
    parser.add_argument("--recorded", default=os.path.join(ROOT, "bench", "figures.json"),
                        help="the last recorded figures, to warn of a scenario slower than they are by more than the spread")
    parser.add_argument("--record", nargs="?", const=os.path.join(ROOT, "bench", "figures.json"),
                        help="write this run's figures there (default bench/figures.json), for later runs to compare with")
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
    args.content_kinds = parse_list(args.content_kinds, CONTENTS, "--content-kinds")
    args.content_modes = parse_list(args.content_modes, ["launch", "resident"], "--content-modes")
    # text-bare-kinds is a kind of the content scenario alone (its agent's second registration is made there).
    contents = parse_list(args.contents, [c for c in CONTENTS if c != "text-bare-kinds"], "--contents")
    if not set(only) & {"latency", "throughput", "resident", "batch", "burst"}:
        contents = []  # only content and resolution, which choose their own files
    mix = None
    if "mix" in contents:
        if not args.corpus_script:
            raise SystemExit("--contents mix needs --corpus-script (Tests/Corpus/make-corpus)")
        mix_dir, corpus = load_mix(args.corpus_script)
        mix = Files("mix", corpus)
        print("mix: %d files from %s, %d bare (no extension)"
              % (len(corpus), mix_dir, sum(1 for name, _ in corpus if "." not in name)), file=sys.stderr)
    results = {"contents": {}, "content_text": {c: CONTENT_TEXT[c] for c in contents}}
    with tempfile.TemporaryDirectory(prefix="inboxd-bench-", dir="/var/tmp") as workdir:
        try:
            args.workdir = workdir
            os.chmod(workdir, 0o755)  # handlers run under identities of their own: they reach their logs below it
            for content in contents:
                files = mix if content == "mix" else Files(content)
                ours = results["contents"][content] = {}
                run_scenarios(args, tools, only, content, files, ours)
            if "content" in only:
                print("content: bursts of %d files of each kind (%s), %s..."
                      % (args.content_count, ", ".join(args.content_kinds), " and ".join(args.content_modes)), file=sys.stderr)
                results["content"] = bench_content(args, tools)
            if "resolution" in only and args.resolution_bench:
                print("resolution: %d registrations, the corpus..." % args.registrations, file=sys.stderr)
                results["resolution"] = bench_resolution(args)
            if "preview" in only:
                if not args.inboxctl or not args.preview_corpus_script:
                    results["preview"] = {"skipped": "needs --inboxctl and --preview-corpus-script (bench/run gives both)"}
                else:
                    print("preview: time to first picture, %d runs (LibreOffice %d)..." % (args.preview_runs, args.office_runs),
                          file=sys.stderr)
                    results["preview"] = preview.bench_preview(args, workdir)
            if "print" in only:
                print("print: %d files of each kind per subject, %d rounds: lp, inboxctl print --no-wait, a Print= hot folder..."
                      % (args.print_count, max(1, args.rounds)), file=sys.stderr)
                results["print"] = printing.bench_print(
                    args, workdir, lambda directory, text, env: Agent(args.inboxd, directory, None, registration=text,
                                                                      identifier="bench.print", env=env))
            if "cluster" in only:
                print("cluster: bursts of %d files, %d single files, %d rounds: local, an ingest agent with 1 and 2 workers..."
                      % (args.cluster_count, args.cluster_latency_count, max(1, args.rounds)), file=sys.stderr)
                if args.cluster_content != "mix":
                    files = Files(args.cluster_content)
                elif mix:
                    files = mix
                elif args.corpus_script:
                    files = Files("mix", load_mix(args.corpus_script)[1])
                else:
                    raise SystemExit("--cluster-content mix needs --corpus-script (Tests/Corpus/make-corpus)")
                kit = types.SimpleNamespace(Agent=Agent, Lines=Lines, cpu_seconds=cpu_seconds, descendants=descendants,
                                            journald_pid=journald_pid)
                results["cluster"] = cluster.bench_cluster(args, workdir, tools, kit, files)
        finally:
            for started in list(RUNNING):
                started.kill()
    main_content = contents[0] if contents else None
    results["targets_content"] = main_content
    results["targets"] = targets(results["contents"].get(main_content, {}), results["contents"].get("empty"),
                                 results.get("content"))
    results["targets"] += preview.targets(results.get("preview", {}))
    recorded = load_recorded(args.recorded)
    results["regressions"] = regressions(results, recorded)
    if args.record:
        record(results, args.record, args)
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        report(results)
        for line in results["regressions"]:
            print("WARNING: " + line)
        if args.record:
            print("recorded these figures in %s" % args.record)


def parse_list(value, allowed, option):
    items = [item for item in value.split(",") if item] if value else []
    for item in items:
        if item not in allowed:
            raise SystemExit("%s: %r is not one of %s" % (option, item, ", ".join(allowed)))
    return items


def run_scenarios(args, tools, only, content, files, results):
    """Every scenario but resolution and content on one kind of files, into results."""
    about = "%s files" % content
    if "latency" in only:
        subjects = subjects_for(args, tools, "latency")
        print("latency, %s: %d single arrivals each: posix_spawn, %s..."
              % (about, args.latency_count, ", ".join(s.label for s in subjects)), file=sys.stderr)
        results["latency"] = bench_latency(args, tools, subjects, "latency-" + content, files)
    if "throughput" in only:
        subjects = subjects_for(args, tools, "throughput")
        print("throughput, %s: bursts of %d files: two-worker posix_spawn, %s..."
              % (about, args.burst_count, ", ".join(s.label for s in subjects)), file=sys.stderr)
        results["throughput"] = bench_throughput(args, tools, subjects, args.burst_count, "throughput-" + content, files)
    if "resident" in only:
        print("resident, %s: %d single arrivals, bursts of %d files..." % (about, args.latency_count, args.burst_count),
              file=sys.stderr)
        results["resident_latency"] = bench_latency(args, tools, subjects_for(args, tools, "resident-latency"),
                                                    "resident-latency-" + content, files)
        if results["resident_latency"]["skipped"]:
            results["resident_throughput"] = {"count": args.burst_count, "rounds": 0, "subjects": {},
                                              "skipped": results["resident_latency"]["skipped"]}
        else:
            results["resident_throughput"] = bench_throughput(args, tools, subjects_for(args, tools, "resident-throughput"),
                                                              args.burst_count, "resident-throughput-" + content, files)
    if "batch" in only:
        print("batch, %s: bursts of %d files, BatchSize=%d..." % (about, args.burst_count, args.batch_size), file=sys.stderr)
        results["batch"] = bench_throughput(args, tools, subjects_for(args, tools, "batch"), args.burst_count,
                                            "batch-" + content, files)
    if "burst" in only:
        print("burst, %s: %d files at once, then %d s idle..." % (about, args.big_count, args.idle_seconds), file=sys.stderr)
        results["burst"], results["idle"] = bench_big_bursts(args, tools, files, content)

if __name__ == "__main__":
    main()
