"""The print scenario of bench.py: arrival -> job accepted by cupsd, for lp, inboxctl print and a print hot folder.

A private cupsd, set up as Tests/IntegrationTests/PrintServer.swift sets up its own: every path under the run's
directory, listening on DIR/cups.sock only, its clients pointed there with CUPS_SERVER, stopped by its PID. One queue
prints through the Generic PDF PPD of cups-filters to file:/dev/null, so that the device never holds a job up: what is
measured is cupsd taking the jobs, not a printer printing them.

The files have real content: a PDF of --print-pages pages of Helvetica text written by Ghostscript (pdfwrite, from
PostScript made here), and a text file of --print-text-lines lines. Each subject prints --print-count copies of each
(distinct files, staged beforehand), in --rounds rounds whose order turns by one each round:

  lp          lp -d Q FILE, one file after another, as a shell loop would: a job is accepted when lp returns
              (cupsd has answered its Create-Job and Send-Document)
  inboxctl    inboxctl print --printer Q --no-wait FILE, likewise; it types each file first, and draws a text file as
              PDF pages (pango-view, pdfunite) before it sends it, as lp leaves text to cupsd's filters
  hot folder  the files renamed at once into the Inbox of an inboxd whose one registration is Print=Q (for PDF and
              plain text): accepted when cupsd has answered the last of them, counted in cupsd's access_log
              (Send-Document or Print-Job, successful-ok, for /printers/Q)

For every subject the access_log must show exactly one accepted document per file, or the subject is not measured.
Between subjects the queue drains (lpstat -o Q is empty) and the agent is idle, so that one subject's jobs are not
being printed while the next one is measured.

The figures: files/s of each subject (median over the rounds), its ratio to lp's for the same kind of file (median
rates; and round by round, whose min-max is the spread), and for lp and inboxctl the median time of one call.

The hot folder needs an agent that knows Print=: `inboxctl verify --strict` on its registration must pass. Until then
it is skipped with verify's words; lp and inboxctl are measured anyway.
"""
import os
import shutil
import signal
import statistics
import subprocess
import time

KINDS = ("pdf", "text")
LP, INBOXCTL, HOT = "lp", "inboxctl", "hot folder"
SUBJECTS = (LP, INBOXCTL, HOT)
QUEUE = "bench"
PPD = "/usr/share/ppd/cupsfilters/Generic-PDF_Printer-PDF.ppd"
NEEDS = [("/usr/sbin/cupsd", "cups-daemon"), ("/usr/bin/lp", "cups-client"), ("/usr/bin/lpstat", "cups-client"),
         ("/usr/sbin/lpadmin", "cups-client"), ("/usr/bin/gs", "ghostscript"), (PPD, "cups-filters")]
ACCEPTED_OPERATIONS = ("Send-Document", "Print-Job")


class Failed(Exception):
    pass


# ---- what is printed --------------------------------------------------------------------------------------

def postscript(pages, lines=30):
    """PostScript of pages US Letter pages, each lines lines of Helvetica naming its page and line."""
    out = ["%!PS-Adobe-3.0", "/Helvetica findfont 12 scalefont setfont"]
    for page in range(1, pages + 1):
        for line in range(1, lines + 1):
            out.append("72 %d moveto (Page %d of the print benchmark's document, line %d: words printed through CUPS.) show"
                       % (740 - (line - 1) * 22, page, line))
        out.append("showpage")
    return "\n".join(out) + "\n"


def text(lines):
    """lines lines of plain text, each under 80 columns: a line is a printed line (inboxctl prints 80 x 50 a page)."""
    return "".join("Line %04d of the print benchmark's text: plain words to fill a page.\n" % line
                   for line in range(1, lines + 1))


def make_documents(directory, pages, lines):
    """The PDF (by Ghostscript's pdfwrite) and the text file every subject prints: {kind: path}."""
    source = os.path.join(directory, "document.ps")
    with open(source, "w") as f:
        f.write(postscript(pages))
    pdf = os.path.join(directory, "document.pdf")
    result = subprocess.run(["gs", "-q", "-dSAFER", "-dBATCH", "-dNOPAUSE", "-sDEVICE=pdfwrite", "-sOutputFile=" + pdf, source],
                            stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if result.returncode != 0 or not os.path.exists(pdf):
        raise Failed("gs could not write the PDF: %s" % result.stderr.strip()[:300])
    plain = os.path.join(directory, "document.txt")
    with open(plain, "w") as f:
        f.write(text(lines))
    return {"pdf": pdf, "text": plain}


def stage(source, directory, prefix, count):
    """count copies of source in directory (copies, not links: the agent refuses a hard link), in their order."""
    os.makedirs(directory, exist_ok=True)
    extension = os.path.splitext(source)[1]
    with open(source, "rb") as f:
        data = f.read()
    paths = []
    for i in range(count):
        path = os.path.join(directory, "%s%d%s" % (prefix, i, extension))
        with open(path, "wb") as f:
            f.write(data)
        paths.append(path)
    return paths


# ---- the private cupsd -------------------------------------------------------------------------------------

def accepted_documents(lines, queue):
    """How many of these access_log lines are a document cupsd accepted for queue (Send-Document or Print-Job,
    successful-ok), e.g. `localhost - - [02/Dec/2026:08:41:16 +0000] "POST /printers/q HTTP/1.1" 200 6840
    Send-Document successful-ok`."""
    target = '"POST /printers/%s HTTP/' % queue
    count = 0
    for line in lines:
        fields = line.split()
        if target in line and len(fields) >= 2 and fields[-1] == "successful-ok" and fields[-2] in ACCEPTED_OPERATIONS:
            count += 1
    return count


class CupsServer:
    """A cupsd of this run: ServerRoot, spool, logs and socket under root; one queue to file:/dev/null."""

    def __init__(self, root):
        self.root = root
        for d in ("spool", "cache", "state", "log", "tmp"):
            os.makedirs(os.path.join(root, d), exist_ok=True)
        os.chmod(root, 0o755)  # the filters run as lp
        os.chmod(os.path.join(root, "tmp"), 0o1777)
        self.socket = os.path.join(root, "cups.sock")
        self.access_log = os.path.join(root, "log", "access_log")
        files = ("ServerRoot {r}\nRequestRoot {r}/spool\nCacheDir {r}/cache\nStateDir {r}/state\nTempDir {r}/tmp\n"
                 "AccessLog {r}/log/access_log\nErrorLog {r}/log/error_log\nPageLog {r}/log/page_log\n"
                 "ServerBin /usr/lib/cups\nDataDir /usr/share/cups\nFileDevice Yes\n").format(r=root)
        if os.geteuid() == 0:
            files += "User lp\nGroup lp\nSystemGroup root\n"  # cupsd refuses User root
        with open(os.path.join(root, "cups-files.conf"), "w") as f:
            f.write(files)
        # Every document accepted is a line of the access log (actions level), never rotated; completed jobs are
        # forgotten, so that rounds of many jobs leave cupsd as it was.
        with open(os.path.join(root, "cupsd.conf"), "w") as f:
            f.write("Listen %s\nBrowsing No\nWebInterface No\nErrorPolicy abort-job\nDefaultAuthType None\n"
                    "AccessLogLevel actions\nLogLevel warn\nMaxLogSize 0\nMaxJobs 0\nPreserveJobHistory No\n"
                    "<Location />\n  Order allow,deny\n  Allow all\n</Location>\n" % self.socket)
        self.env = {k: v for k, v in os.environ.items() if k not in ("PRINTER", "LPDEST")}
        self.env["CUPS_SERVER"] = self.socket
        self.process = subprocess.Popen(["/usr/sbin/cupsd", "-f", "-c", os.path.join(root, "cupsd.conf"),
                                         "-s", os.path.join(root, "cups-files.conf")],
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                        start_new_session=True)
        deadline = time.monotonic() + 20
        while "scheduler is running" not in self.client(["lpstat", "-r"], check=False):
            if time.monotonic() > deadline or self.process.poll() is not None:
                self.stop()
                raise Failed("cupsd did not answer on %s within 20 s (see %s/log/error_log)" % (self.socket, root))
            time.sleep(0.05)
        self.client(["lpadmin", "-p", QUEUE, "-E", "-v", "file:/dev/null", "-P", PPD])
        self.offset = 0

    def client(self, argv, check=True):
        result = subprocess.run(argv, env=self.env, stdin=subprocess.DEVNULL, capture_output=True, text=True)
        if check and result.returncode != 0:
            raise Failed("%s exited %d: %s" % (" ".join(argv), result.returncode, result.stderr.strip()[:300]))
        return result.stdout

    def new_log_lines(self):
        """The access_log's lines since the last call."""
        with open(self.access_log, "rb") as f:
            f.seek(self.offset)
            data = f.read()
        end = data.rfind(b"\n") + 1  # a line cupsd is still writing waits for the next call
        self.offset += end
        return data[:end].decode(errors="replace").splitlines()

    def wait_accepted(self, count, timeout, poll=0.002):
        """Waits until count more documents were accepted for the queue; when the last was seen (time.monotonic())."""
        seen, deadline = 0, time.monotonic() + timeout
        while True:
            seen += accepted_documents(self.new_log_lines(), QUEUE)
            if seen >= count:
                return time.monotonic(), seen
            self.check_running()
            if time.monotonic() > deadline:
                raise Failed("cupsd accepted %d of %d documents within %d s" % (seen, count, timeout))
            time.sleep(poll)

    def check_running(self):
        status = self.process.poll()
        if status is not None:
            raise Failed("cupsd exited (%s; see %s/log/error_log)"
                         % ("signal %d" % -status if status < 0 else "status %d" % status, self.root))

    def drained(self):
        self.check_running()
        return not self.client(["lpstat", "-o", QUEUE], check=False).strip()

    def wait_drained(self, timeout=600):
        deadline = time.monotonic() + timeout
        while not self.drained():
            if time.monotonic() > deadline:
                raise Failed("queue %s still has jobs after %d s" % (QUEUE, timeout))
            time.sleep(0.1)

    def stop(self):
        """SIGTERM to the cupsd this run started (its PID only), SIGKILL if it has not ended within 10 s."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


# ---- the subjects ---------------------------------------------------------------------------------------------

def registration(identifier=QUEUE):
    return ("[Handler]\nIdentifier=bench.print\nPrint=%s\n\n[DocumentType]\nContentTypes=com.adobe.pdf public.plain-text\n"
            "Rank=Owner\n" % identifier)


def knows_print(inboxctl, path):
    """None when inboxctl verify --strict passes the Print= registration at path, else why not (its words)."""
    result = subprocess.run([inboxctl, "verify", "--strict", path], stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if result.returncode == 0:
        return None
    words = "; ".join(line.strip().replace(path, os.path.basename(path))
                      for line in (result.stdout + result.stderr).splitlines() if line.strip())
    if "unknown key 'Print'" in words:
        return "the agent does not know Print= yet (inboxctl verify --strict: %s)" % words
    return "inboxctl verify --strict refuses the Print= registration: %s" % words


def run_each(argv_of, paths, env, cups, timeout=600):
    """Runs argv_of(path) for each path, one after another, each to its end: (first start, last end, [seconds])."""
    calls = []
    started = time.monotonic()
    for path in paths:
        t0 = time.monotonic()
        result = subprocess.run(argv_of(path), env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, timeout=timeout)
        calls.append(time.monotonic() - t0)
        if result.returncode != 0:
            raise Failed("%s exited %d: %s" % (" ".join(argv_of(path)[:2]), result.returncode,
                                                result.stderr.decode(errors="replace").strip()[:300]))
    ended = time.monotonic()
    _, seen = cups.wait_accepted(len(paths), 30)
    if seen != len(paths):
        raise Failed("cupsd's access_log shows %d documents accepted for %d files" % (seen, len(paths)))
    return started, ended, calls


class HotFolder:
    """inboxd with one Print=QUEUE registration, on directories of its own, its jobs for the run's cupsd."""

    def __init__(self, start_agent, workdir, cups, inboxctl):
        self.cups = cups
        os.makedirs(workdir, exist_ok=True)
        path = os.path.join(workdir, "bench.print.handler")
        with open(path, "w") as f:
            f.write(registration())
        self.unsupported = knows_print(inboxctl, path)
        self.agent = None
        if self.unsupported is None:
            self.agent = start_agent(os.path.join(workdir, "agent"), registration(), cups.env)

    def burst(self, paths, timeout=600):
        """Renames paths into the Inbox at once: (first rename, when cupsd accepted the last document)."""
        started = time.monotonic()
        for path in paths:
            os.rename(path, os.path.join(self.agent.inbox, os.path.basename(path)))
        ended, seen = self.cups.wait_accepted(len(paths), timeout)
        if seen != len(paths):
            raise Failed("cupsd's access_log shows %d documents accepted for %d files" % (seen, len(paths)))
        return started, ended

    def probe(self, source, staging):
        """One file through, so that the agent is known to print (and is warm); raises Failed with the reason."""
        path = stage(source, staging, "probe", 1)[0]
        self.cups.new_log_lines()
        os.rename(path, os.path.join(self.agent.inbox, os.path.basename(path)))
        try:
            self.cups.wait_accepted(1, 30)
        except Failed:
            where = self.agent.set_aside("probe0")
            raise Failed("the probe file was not printed within 30 s%s (journalctl -t inboxd)"
                         % (": it went to %s/" % where if where else ""))
        self.settle()

    def settle(self, timeout=600):
        self.cups.wait_drained(timeout)
        self.agent.wait_idle(timeout)

    def stop(self):
        if self.agent:
            self.agent.stop()
            self.agent = None


def turn(items, r):
    return [items[(r + k) % len(items)] for k in range(len(items))]


def bench_print(args, workdir, start_agent):
    """The print scenario: {"kinds", "count", "rounds", "subjects": {kind: {subject: figure}}, "skipped": {...}}.
    start_agent(directory, registration text, environment) starts an inboxd (bench.Agent)."""
    results = {"count": args.print_count, "rounds": max(1, args.rounds), "pages": args.print_pages,
               "text_lines": args.print_text_lines, "subjects": {}, "skipped": {}, "samples": {}}
    missing = ["%s (%s)" % (path, package) for path, package in NEEDS if not os.path.exists(path)]
    if missing:
        results["scenario_skipped"] = "missing: %s; scripts/setup installs them" % ", ".join(missing)
        return results
    if os.geteuid() != 0:
        results["scenario_skipped"] = "a private cupsd needs root here (it runs its filters as lp)"
        return results
    root = os.path.join(workdir, "print")
    os.makedirs(root)
    os.chmod(root, 0o755)
    documents = make_documents(root, args.print_pages, args.print_text_lines)
    cups = CupsServer(os.path.join(root, "cups"))
    hot = None
    try:
        subjects = [LP] + ([INBOXCTL] if args.inboxctl else []) + [HOT]
        if not args.inboxctl:
            results["skipped"][INBOXCTL] = "needs --inboxctl (bench/run gives it)"
        hot = HotFolder(start_agent, os.path.join(root, "hot"), cups, args.inboxctl) if args.inboxctl else None
        if hot is None:
            results["skipped"][HOT] = "needs --inboxctl, to check the Print= registration (bench/run gives it)"
        elif hot.unsupported:
            results["skipped"][HOT] = hot.unsupported
        else:
            try:
                hot.probe(documents["pdf"], os.path.join(root, "probe"))
            except Failed as why:
                results["skipped"][HOT] = str(why)
        active = [s for s in subjects if s not in results["skipped"]]
        samples = {kind: {s: [] for s in active} for kind in KINDS}
        calls = {kind: {s: [] for s in active} for kind in KINDS}
        for r in range(results["rounds"]):
            for kind in KINDS:
                for subject in turn(active, r):
                    if subject in results["skipped"]:
                        continue
                    staging = os.path.join(root, "staging-%d-%s-%s" % (r, kind, subject.replace(" ", "-")))
                    paths = stage(documents[kind], staging, "%s-%d-" % (kind, r), args.print_count)
                    cups.new_log_lines()  # what came before is not this subject's
                    try:
                        if subject == LP:
                            started, ended, took = run_each(lambda p: ["lp", "-d", QUEUE, p], paths, cups.env, cups)
                        elif subject == INBOXCTL:
                            started, ended, took = run_each(lambda p: [args.inboxctl, "print", "--printer", QUEUE, "--no-wait", p],
                                                            paths, cups.env, cups)
                        else:
                            (started, ended), took = hot.burst(paths), []
                        samples[kind][subject].append(len(paths) / (ended - started))
                        calls[kind][subject] += took
                    except Failed as why:
                        results["skipped"][subject] = "%s: %s" % (kind, why)
                    # Its jobs printed (to /dev/null) and the agent idle before the next subject is measured.
                    cups.wait_drained()
                    if hot and hot.agent:
                        hot.agent.wait_idle(600)
                    shutil.rmtree(staging, ignore_errors=True)
        for by in list(samples.values()) + list(calls.values()):
            for subject in results["skipped"]:
                by.pop(subject, None)  # one that failed in a later round is not measured at all
        results["samples"] = {kind: {s: [round(x, 2) for x in v] for s, v in by.items()} for kind, by in samples.items()}
        results["subjects"] = figures(samples, calls)
    finally:
        if hot:
            hot.stop()
        cups.stop()
    return results


def figures(samples, calls=None):
    """Per kind and subject: median files/s, its ratio to lp's median, the ratios round by round (the spread), and for
    the subjects run once per file the median call in ms. samples: {kind: {subject: [files/s per round]}}."""
    out = {}
    for kind, by in samples.items():
        lp = by.get(LP) or []
        out[kind] = {}
        for subject, rates in by.items():
            if not rates:
                continue
            figure = {"per_s": round(statistics.median(rates), 1), "rounds": [round(x, 2) for x in rates]}
            if lp and subject != LP:
                figure["to_lp"] = round(statistics.median(rates) / statistics.median(lp), 2)
                figure["rounds_to_lp"] = [round(ours / theirs, 2) for ours, theirs in zip(rates, lp)]
            took = (calls or {}).get(kind, {}).get(subject)
            if took:
                figure["call_ms"] = round(statistics.median(took) * 1000, 1)
            out[kind][subject] = figure
    return out


def report(results):
    if results.get("scenario_skipped"):
        print("print: skipped: %s" % results["scenario_skipped"])
        return
    print("print, arrival -> job accepted by cupsd (%d files of each kind per subject, %d rounds; a PDF of %d pages, "
          "%d lines of text; ratios of rates to lp, above 1 is faster):"
          % (results["count"], results["rounds"], results["pages"], results["text_lines"]))
    for kind, by in results.get("subjects", {}).items():
        for subject, f in by.items():
            parts = []
            if "to_lp" in f:
                parts.append("%.2fx lp" % f["to_lp"])
                if len(f["rounds_to_lp"]) > 1:
                    parts.append("rounds %.2f-%.2fx" % (min(f["rounds_to_lp"]), max(f["rounds_to_lp"])))
            elif len(f["rounds"]) > 1:
                parts.append("rounds %.1f-%.1f files/s" % (min(f["rounds"]), max(f["rounds"])))
            if "call_ms" in f:
                parts.append("%.1f ms a call" % f["call_ms"])
            print("  %-5s %-12s %7.1f files/s  %s" % (kind, subject, f["per_s"], "; ".join(parts)))
    for subject, why in results.get("skipped", {}).items():
        print("  %-18s skipped: %s" % (subject, why))
