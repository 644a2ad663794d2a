"""The preview scenario of bench.py: Quick Look's time to first picture against the tool it runs, side by side.

Each case runs inboxctl and its peer in alternating order, --preview-runs times (LibreOffice --office-runs), on the
preview corpus (Tests/PreviewCorpus/make-corpus), each run into a fresh output directory; a run is timed from the
spawn to the process's exit, and checked for what it must leave (a PNG), so a failure is never timed:

  pdf       page 1 of report.pdf: inboxctl preview --builtin --pages 1 --output D
            against pdftoppm -png -f 1 -l 1 -scale-to 1024
  image     photo.jpg to a PNG: inboxctl preview --builtin --output D  against gdk-pixbuf-thumbnailer -s 1024
  terminal  photo.png on a terminal: inboxctl preview --builtin  against chafa --size=80x24, each with stdout, stdin
            and stderr a pseudo-terminal of 80 x 24 that this script makes (TERM=xterm-256color), `q` typed at once:
            inboxctl draws the picture, reads the q and exits; chafa draws and exits
  office    page 1 of letter.docx: inboxctl preview --builtin --pages 1 --output D  against
            soffice --headless -env:UserInstallation=<fresh> --convert-to pdf, then pdftoppm of page 1; a fresh
            LibreOffice profile every run on both sides (what inboxctl does). `cold` is the first round (inboxctl runs
            first in it, so it pays for the page cache), `warm` the median of the later ones

Ratios are inboxd / peer of the medians (target <= 1.2x). A case whose tool is missing is skipped with the reason; so is
the whole scenario when inboxctl cannot preview yet (one probe run of the pdf case).
"""
import json
import os
import pty
import select
import shutil
import signal
import statistics
import subprocess
import tempfile
import termios
import fcntl
import struct
import time

TARGET = 1.2
TERMINAL = (80, 24)


def median(values):
    return statistics.median(values) if values else None


def ratio(ours, peer):
    """ours / peer, or None when either is missing or the peer took no time."""
    if ours is None or not peer:
        return None
    return ours / peer


def cold_warm(samples):
    """A LibreOffice subject's samples (seconds, in round order): the first run, the median of the later ones."""
    if not samples:
        return None, None
    return samples[0], median(samples[1:]) if len(samples) > 1 else None


def pages_in(json_text):
    """The PNG pages inboxctl preview --json says it wrote, per item: [(title, [path, ...], error)]."""
    items = json.loads(json_text)["items"]
    return [(item.get("title"), [page["path"] for page in item.get("pages") or []], item.get("error")) for item in items]


def pngs(directory):
    return sorted(name for name in os.listdir(directory) if name.endswith(".png"))


class Failed(Exception):
    pass


def timed(argv, out, env=None, timeout=120):
    """Runs argv to its end; seconds from spawn to exit. Raises Failed with its stderr when it fails or leaves no PNG
    in out (None: nothing to check)."""
    started = time.monotonic()
    try:
        result = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise Failed("%s: still running after %d s" % (argv[0], timeout))
    elapsed = time.monotonic() - started
    if result.returncode != 0:
        raise Failed("%s exited %d: %s" % (argv[0], result.returncode, result.stderr.decode(errors="replace").strip()[:300]))
    if out is not None and not pngs(out):
        raise Failed("%s left no PNG in %s" % (argv[0], out))
    return elapsed


def timed_on_terminal(argv, env, timeout=60):
    """Runs argv with a pseudo-terminal of TERMINAL's size as stdin, stdout and stderr, types `q` at once, drains what
    it draws; seconds from spawn to exit, and the bytes it drew."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", TERMINAL[1], TERMINAL[0], 0, 0))
    drawn = bytearray()
    started = time.monotonic()
    process = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True)
    os.close(slave)
    try:
        os.write(master, b"q")
        deadline = started + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
                raise Failed("%s did not end within %d s of a typed q" % (argv[0], timeout))
            ready, _, _ = select.select([master], [], [], min(left, 0.5))
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # EIO: every holder of the slave side is gone
                    chunk = b""
                if not chunk:
                    break
                drawn += chunk
            elif process.poll() is not None:
                break
        status = process.wait()
        elapsed = time.monotonic() - started
    finally:
        os.close(master)
    if status != 0:
        raise Failed("%s exited %d on a terminal: %s" % (argv[0], status, bytes(drawn[-300:]).decode(errors="replace")))
    if len(drawn) < 200:
        raise Failed("%s drew only %d bytes on the terminal" % (argv[0], len(drawn)))
    return elapsed, bytes(drawn)


class Case:
    def __init__(self, key, title, peer, runs, needs):
        self.key, self.title, self.peer, self.runs, self.needs = key, title, peer, runs, needs


def cases(args):
    return [
        Case("pdf", "page 1 of report.pdf to PNG", "pdftoppm", args.preview_runs, ["pdftoppm"]),
        Case("image", "photo.jpg to PNG", "gdk-pixbuf-thumbnailer", args.preview_runs, ["gdk-pixbuf-thumbnailer"]),
        Case("terminal", "photo.png on an 80x24 terminal", "chafa", args.preview_runs, ["chafa"]),
        Case("office", "page 1 of letter.docx to PNG (LibreOffice)", "soffice + pdftoppm", args.office_runs,
             ["soffice", "pdftoppm"]),
    ]


def bench_preview(args, workdir):
    """The preview scenario: {"cases": {key: {...}}, "skipped": reason or None}."""
    corpus = os.path.join(workdir, "preview-corpus")
    subprocess.run([args.preview_corpus_script, corpus], check=True, stdout=subprocess.DEVNULL)
    files = {name: os.path.join(corpus, name) for name in ("report.pdf", "photo.jpg", "photo.png", "letter.docx")}
    env = dict(os.environ, TERM="xterm-256color", COLUMNS=str(TERMINAL[0]), LINES=str(TERMINAL[1]))
    counter = [0]

    def fresh(kind):
        counter[0] += 1
        path = os.path.join(workdir, "preview-%s-%d" % (kind, counter[0]))
        os.mkdir(path)
        return path

    def profile():
        return "-env:UserInstallation=file://" + fresh("profile")

    inboxctl = [args.inboxctl, "preview", "--builtin"]
    # Each subject: a function of nothing that runs once and returns its seconds.
    subjects = {
        "pdf": {"inboxd": lambda: (lambda d: timed(inboxctl + ["--pages", "1", "--output", d, files["report.pdf"]], d))(fresh("out")),
                "pdftoppm": lambda: (lambda d: timed(["pdftoppm", "-png", "-f", "1", "-l", "1", "-scale-to", "1024",
                                                      files["report.pdf"], os.path.join(d, "page")], d))(fresh("out"))},
        "image": {"inboxd": lambda: (lambda d: timed(inboxctl + ["--output", d, files["photo.jpg"]], d))(fresh("out")),
                  "gdk-pixbuf-thumbnailer": lambda: (lambda d: timed(["gdk-pixbuf-thumbnailer", "-s", "1024", files["photo.jpg"],
                                                                      os.path.join(d, "photo.png")], d))(fresh("out"))},
        "terminal": {"inboxd": lambda: timed_on_terminal(inboxctl + [files["photo.png"]], env)[0],
                     "chafa": lambda: timed_on_terminal(["chafa", "--size=%dx%d" % TERMINAL, files["photo.png"]], env)[0]},
        "office": {"inboxd": lambda: (lambda d: timed(inboxctl + ["--pages", "1", "--output", d, files["letter.docx"]], d))(fresh("out")),
                   "soffice + pdftoppm": lambda: office_peer(files["letter.docx"], fresh("out"), profile())},
    }

    results = {"runs": args.preview_runs, "office_runs": args.office_runs, "target": TARGET, "cases": {}, "skipped": None}
    try:
        subjects["pdf"]["inboxd"]()  # the probe: an inboxctl that cannot preview yet skips the scenario
    except Failed as error:
        results["skipped"] = "inboxctl cannot preview report.pdf here: %s" % error
        return results
    for case in cases(args):
        missing = [tool for tool in case.needs if not shutil.which(tool)]
        if missing:
            results["cases"][case.key] = {"title": case.title, "peer": case.peer, "skipped": "%s not installed" % ", ".join(missing)}
            continue
        samples = {"inboxd": [], case.peer: []}
        order = ["inboxd", case.peer]
        error = None
        for r in range(case.runs):
            for label in (order if r % 2 == 0 else order[::-1]):
                try:
                    samples[label].append(subjects[case.key][label]())
                except Failed as failure:
                    error = "%s: %s" % (label, failure)
                    break
            if error:
                break
        results["cases"][case.key] = summarize(case, samples, error)
        for entry in os.listdir(workdir):  # the runs' pages and profiles, not the corpus
            if entry.startswith("preview-") and entry != "preview-corpus":
                shutil.rmtree(os.path.join(workdir, entry), ignore_errors=True)
    return results


def office_peer(document, out, profile_argument):
    """soffice --convert-to pdf with a fresh profile, then pdftoppm of page 1: LibreOffice's own way to a first page."""
    started = time.monotonic()
    timed(["soffice", profile_argument, "--headless", "--convert-to", "pdf", "--outdir", out, document], None, timeout=300)
    pdf = os.path.join(out, os.path.splitext(os.path.basename(document))[0] + ".pdf")
    if not os.path.exists(pdf):
        raise Failed("soffice wrote no %s" % pdf)
    timed(["pdftoppm", "-png", "-f", "1", "-l", "1", "-scale-to", "1024", pdf, os.path.join(out, "page")], out)
    return time.monotonic() - started


def summarize(case, samples, error=None):
    """A case's figures from its samples (seconds): medians in ms and inboxd / peer; LibreOffice cold and warm apart."""
    ours, theirs = samples["inboxd"], samples[case.peer]
    figure = {"title": case.title, "peer": case.peer,
              "samples_ms": {label: [round(s * 1000, 1) for s in values] for label, values in samples.items()}}
    if error:
        figure["skipped"] = error
        return figure
    if case.key == "office":
        ours_cold, ours_warm = cold_warm(ours)
        peer_cold, peer_warm = cold_warm(theirs)
        figure["cold"] = {"inboxd_ms": ms(ours_cold), "peer_ms": ms(peer_cold), "ratio": rounded(ratio(ours_cold, peer_cold))}
        figure["warm"] = {"inboxd_ms": ms(ours_warm), "peer_ms": ms(peer_warm), "ratio": rounded(ratio(ours_warm, peer_warm))}
    else:
        figure["inboxd_ms"], figure["peer_ms"] = ms(median(ours)), ms(median(theirs))
        figure["ratio"] = rounded(ratio(median(ours), median(theirs)))
    return figure


def ms(seconds):
    return None if seconds is None else round(seconds * 1000, 1)


def rounded(value):
    return None if value is None else round(value, 3)


def figures(results):
    """(label, inboxd ms, peer, peer ms, ratio) per measured line, in the report's order."""
    rows = []
    for key, case in results.get("cases", {}).items():
        if "skipped" in case:
            continue
        if key == "office":
            for phase in ("cold", "warm"):
                if case[phase]["ratio"] is not None:
                    rows.append(("%s, %s" % (case["title"], phase), case[phase]["inboxd_ms"], case["peer"],
                                 case[phase]["peer_ms"], case[phase]["ratio"]))
        else:
            rows.append((case["title"], case["inboxd_ms"], case["peer"], case["peer_ms"], case["ratio"]))
    return rows


def targets(results):
    """The preview targets, in bench.targets' shape."""
    return [{"target": "preview, time to first picture, inboxd / %s: %s" % (peer, label), "value": value, "bound": TARGET,
             "met": value <= TARGET, "text": "%.2fx (target <= %.1fx)" % (value, TARGET)}
            for label, _, peer, _, value in figures(results)]


def report(results):
    if results.get("skipped"):
        print("preview: skipped: %s" % results["skipped"])
        return
    print("preview, time to first picture (spawn to exit), median of %d runs (LibreOffice %d), target <= %.1fx:"
          % (results["runs"], results["office_runs"], TARGET))
    for label, ours, peer, theirs, value in figures(results):
        print("  %-52s inboxd %8.1f ms  %-24s %8.1f ms  %.2fx %s"
              % (label, ours, peer, theirs, value, "met" if value <= TARGET else "MISSED"))
    for key, case in results.get("cases", {}).items():
        if "skipped" in case:
            print("  %-52s skipped: %s" % (case["title"], case["skipped"]))
