#!/usr/bin/env python3
"""Tests of bench.py's own logic (no agent needed): python3 bench/test_bench.py"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402
import cluster  # noqa: E402
import preview  # noqa: E402
import printing  # noqa: E402


def results(throughput_rounds, latency_rounds):
    return {"contents": {"mix": {
        "throughput": {"subjects": {"inboxd": {"per_s": 1, "rounds_to_posix_spawn": throughput_rounds},
                                    "incrond": {"per_s": 1, "rounds_to_posix_spawn": [0.1, 0.1, 0.1]}}},
        "latency": {"subjects": {"inboxd": {"median_us": 1, "rounds_to_posix_spawn": latency_rounds}}}}}}


def recorded(throughput_rounds, latency_rounds):
    return {"date": "then", "commit": "0123456789abcdef",
            "figures": {"mix/throughput/inboxd": {"rounds": throughput_rounds},
                        "mix/latency/inboxd": {"rounds": latency_rounds}}}


class RegressionWarning(unittest.TestCase):
    def test_each_direction_beyond_the_spread_warns(self):
        cases = [
            # (this run's burst rounds, latency rounds), (recorded), warned keys
            (([0.40, 0.42, 0.41], [1.60, 1.70, 1.65]), ([0.50, 0.52, 0.51], [1.60, 1.70, 1.62]), ["mix/throughput/inboxd"]),
            (([0.40, 0.42, 0.41], [1.60, 1.70, 1.65]), ([0.40, 0.45, 0.50], [1.60, 1.70, 1.62]), []),  # within the spread
            (([0.60, 0.62, 0.61], [1.60, 1.70, 1.65]), ([0.40, 0.41, 0.42], [1.20, 1.25, 1.22]), ["mix/latency/inboxd"]),
            (([0.60, 0.62, 0.61], [1.00, 1.05, 1.02]), ([0.40, 0.41, 0.42], [1.20, 1.25, 1.22]), []),  # faster: no warning
        ]
        for now, then, warned in cases:
            lines = bench.regressions(results(*now), recorded(*then))
            self.assertEqual([line.split(" ")[0] for line in lines], warned, (now, then, lines))

    def test_peers_and_missing_records_are_not_compared(self):
        self.assertEqual(bench.regressions(results([0.1] * 3, [9.0] * 3), {"figures": {}}), [])
        self.assertEqual(bench.regressions(results([0.1] * 3, [9.0] * 3), None), [])
        self.assertNotIn("mix/throughput/incrond", bench.ratios_by_round(results([0.1] * 3, [1.0] * 3)))


class Files(unittest.TestCase):
    def test_kinds(self):
        cases = [("empty", "f3.txt", 0), ("text", "f3.txt", 65), ("text-bare", "f3", 65), ("binary-bare", "f3", 2048),
                 ("text-bare-kinds", "f3", 65)]
        for kind, name, size in cases:
            files = bench.Files(kind)
            self.assertEqual((files.name("f", 3), len(files.data(3))), (name, size), kind)
        self.assertNotIn(b"\0", bench.Files("text-bare").data(3))
        self.assertEqual(bench.Files("binary-bare").data(5), bench.Files("binary-bare").data(5))  # the same in every round

    def test_mix_cycles_the_corpus(self):
        files = bench.Files("mix", [("photo.png", b"\x89PNG"), ("notes", b"text\n")])
        self.assertEqual([files.name("f", i) for i in range(3)], ["f0-photo.png", "f1-notes", "f2-photo.png"])
        self.assertEqual(files.data(3), b"text\n")


class Preview(unittest.TestCase):
    def case(self, key, peer):
        return preview.Case(key, key + " title", peer, 3, [])

    def test_ratios_are_of_the_medians(self):
        cases = [
            # (inboxd seconds, peer seconds), inboxd ms, peer ms, ratio
            (([0.10, 0.30, 0.12], [0.10, 0.08, 0.11]), 120.0, 100.0, 1.2),
            (([0.05], [0.10]), 50.0, 100.0, 0.5),
            (([0.2, 0.4], [0.1, 0.3]), 300.0, 200.0, 1.5),  # an even count: the middle two's mean
        ]
        for (ours, theirs), ours_ms, peer_ms, ratio in cases:
            figure = preview.summarize(self.case("pdf", "pdftoppm"), {"inboxd": ours, "pdftoppm": theirs})
            self.assertEqual((figure["inboxd_ms"], figure["peer_ms"], figure["ratio"]), (ours_ms, peer_ms, ratio), (ours, theirs))

    def test_libreoffice_cold_is_the_first_run_and_warm_the_later_ones(self):
        figure = preview.summarize(self.case("office", "soffice + pdftoppm"),
                                   {"inboxd": [4.0, 1.0, 1.2, 9.0], "soffice + pdftoppm": [5.0, 1.0, 1.0, 1.0]})
        self.assertEqual(figure["cold"], {"inboxd_ms": 4000.0, "peer_ms": 5000.0, "ratio": 0.8})
        self.assertEqual(figure["warm"], {"inboxd_ms": 1200.0, "peer_ms": 1000.0, "ratio": 1.2})
        self.assertEqual(preview.cold_warm([2.0]), (2.0, None))
        self.assertEqual(preview.cold_warm([]), (None, None))

    def test_a_failed_or_missing_figure_gives_no_ratio_and_no_target(self):
        self.assertIsNone(preview.ratio(None, 1.0))
        self.assertIsNone(preview.ratio(1.0, 0))
        failed = preview.summarize(self.case("image", "gdk-pixbuf-thumbnailer"), {"inboxd": [], "gdk-pixbuf-thumbnailer": [0.1]},
                                   "inboxd: inboxctl exited 1: no generator")
        self.assertEqual(failed["skipped"], "inboxd: inboxctl exited 1: no generator")
        results = {"cases": {"image": failed, "pdf": preview.summarize(self.case("pdf", "pdftoppm"),
                                                                       {"inboxd": [0.13], "pdftoppm": [0.1]})}}
        self.assertEqual([(t["met"], t["value"]) for t in preview.targets(results)], [(False, 1.3)])
        self.assertEqual(preview.targets({"skipped": "inboxctl cannot preview"}), [])
        single = {"cases": {"office": preview.summarize(self.case("office", "soffice"), {"inboxd": [3.0], "soffice": [3.0]})}}
        self.assertEqual([t["target"].rsplit(", ", 1)[1] for t in preview.targets(single)], ["cold"])  # no warm run

    def test_the_pages_inboxctl_says_it_wrote(self):
        text = ('{"items":[{"index":1,"file":"/c/report.pdf","title":"report.pdf","type":"com.adobe.pdf","generator":"pdf",'
                '"pageCount":3,"pages":[{"path":"/o/1-1.png","width":792,"height":1024}],"notes":[],"error":null},'
                '{"index":2,"file":"/c/huge.png","title":"huge.png","type":"public.png","generator":"image","pageCount":0,'
                '"pages":[],"notes":[],"error":"30000 x 30000 pixels is over the bound"}]}')
        self.assertEqual(preview.pages_in(text), [("report.pdf", ["/o/1-1.png"], None),
                                                  ("huge.png", [], "30000 x 30000 pixels is over the bound")])


class Print(unittest.TestCase):
    LOG = [
        'localhost - - [02/Dec/2026:08:33:21 +0000] "POST /admin/ HTTP/1.1" 200 15323 CUPS-Add-Modify-Printer successful-ok',
        'localhost - - [02/Dec/2026:08:33:26 +0000] "POST /printers/bench HTTP/1.1" 200 347 Create-Job successful-ok',
        'localhost - - [02/Dec/2026:08:33:26 +0000] "POST /printers/bench HTTP/1.1" 200 6840 Send-Document successful-ok',
        'localhost - - [02/Dec/2026:08:33:26 +0000] "POST /printers/bench HTTP/1.1" 200 6840 Print-Job successful-ok',
        'localhost - - [02/Dec/2026:08:33:26 +0000] "POST /printers/bench HTTP/1.1" 200 6840 Send-Document client-error-not-possible',
        'localhost - - [02/Dec/2026:08:33:26 +0000] "POST /printers/bench2 HTTP/1.1" 200 6840 Send-Document successful-ok',
        'localhost - - [02/Dec/2026:08:33:27 +0000] "POST /jobs/ HTTP/1.1" 200 120 Send-Document successful-ok',
    ]

    def test_a_document_accepted_is_a_send_document_or_print_job_for_the_queue(self):
        self.assertEqual(printing.accepted_documents(self.LOG, "bench"), 2)
        self.assertEqual(printing.accepted_documents(self.LOG, "bench2"), 1)
        self.assertEqual(printing.accepted_documents([], "bench"), 0)

    def test_rates_and_ratios_to_lp_with_the_rounds(self):
        samples = {"pdf": {"lp": [40.0, 50.0, 60.0], "inboxctl": [20.0, 20.0, 30.0], "hot folder": [80.0, 100.0, 90.0]},
                   "text": {"lp": [50.0], "inboxctl": []}}
        calls = {"pdf": {"lp": [0.010, 0.030, 0.020], "inboxctl": [0.040]}}
        got = printing.figures(samples, calls)
        self.assertEqual(got["pdf"]["lp"], {"per_s": 50.0, "rounds": [40.0, 50.0, 60.0], "call_ms": 20.0})
        self.assertEqual(got["pdf"]["inboxctl"], {"per_s": 20.0, "rounds": [20.0, 20.0, 30.0], "to_lp": 0.4,
                                                  "rounds_to_lp": [0.5, 0.4, 0.5], "call_ms": 40.0})
        self.assertEqual(got["pdf"]["hot folder"]["to_lp"], 1.8)
        self.assertEqual(got["pdf"]["hot folder"]["rounds_to_lp"], [2.0, 2.0, 1.5])
        self.assertNotIn("call_ms", got["pdf"]["hot folder"])
        self.assertEqual(list(got["text"]), ["lp"])  # a subject with no rounds has no figure

    def test_the_documents_say_their_pages_and_lines(self):
        source = printing.postscript(3, lines=2)
        self.assertEqual(source.count("showpage"), 3)
        self.assertIn("(Page 3 of the print benchmark's document, line 2: words printed through CUPS.) show", source)
        lines = printing.text(120).splitlines()
        self.assertEqual((len(lines), lines[0][:9], lines[-1][:9]), (120, "Line 0001", "Line 0120"))

    def test_the_print_registration(self):
        self.assertEqual(printing.registration("q"), "[Handler]\nIdentifier=bench.print\nPrint=q\n\n[DocumentType]\n"
                                                     "ContentTypes=com.adobe.pdf public.plain-text\nRank=Owner\n")


class Cluster(unittest.TestCase):
    def test_the_agents_configurations(self):
        self.assertEqual(cluster.agent_config("/w/ingest/Inbox", "nats://127.0.0.1:4999", "bench1", "ingest", work=False),
                         "[Agent]\nInbox=/w/ingest/Inbox\n\n[Cluster]\nServers=nats://127.0.0.1:4999\nName=bench1\n"
                         "Host=ingest\nWork=no\nInboxes=/w/ingest/Inbox\n")
        self.assertEqual(cluster.agent_config("/w/worker-2/Inbox", "nats://127.0.0.1:4999", "bench1", "worker-2", work=True),
                         "[Agent]\nInbox=/w/worker-2/Inbox\n\n[Cluster]\nServers=nats://127.0.0.1:4999\nName=bench1\n"
                         "Host=worker-2\nWork=yes\n")

    def test_the_url_in_the_ports_file(self):
        cases = [('{"nats":["nats://127.0.0.1:35121"],"monitoring":[]}', "nats://127.0.0.1:35121"),
                 ('{"nats":[]}', None), ("", None), ("{", None), ('["nats://127.0.0.1:1"]', None), ('{"nats":["tls://h:1"]}', None)]
        for text, url in cases:
            self.assertEqual(cluster.server_url(text), url, text)

    def test_arrival_to_start_by_each_files_first_start(self):
        dropped = {"c0.txt": 1_000_000, "c1.txt": 2_000_000, "c2.txt": 3_000_000}
        stamps = [["warm0.txt", "500"], ["c1.txt", "2500000"], ["c0.txt", "4000000"], ["c1.txt", "9000000"],
                  ["c9.txt", "9900000"], ["c2.txt", "?"], ["c2.txt"]]
        samples, handled, twice, last = cluster.arrivals(dropped, stamps, "c")
        self.assertEqual((sorted(samples), handled, twice, last), ([500.0, 3000.0], {"c0.txt", "c1.txt"}, 1, 4_000_000))
        self.assertEqual(cluster.arrivals(dropped, [], "c"), ([], set(), 0, None))

    def test_cpu_per_file_by_role_leaves_out_a_process_gone_meanwhile(self):
        before = {1: ("ingest", 1.0), 2: ("ingest cluster child", 0.5), 3: ("worker", 2.0), 4: ("worker", 2.0),
                  5: ("nats-server", 0.1), 6: ("worker sniffer", None)}
        after = {1: ("ingest", 1.1), 2: ("ingest cluster child", 0.6), 3: ("worker", 2.1), 4: ("worker", 2.3),
                 6: ("worker sniffer", 0.2)}
        self.assertEqual(cluster.cpu_per_file(before, after, 1000),
                         ({"ingest": 100, "ingest cluster child": 100, "worker": 400}, 600))

    def test_roles(self):
        cases = [(["/b/inboxd-cluster", "--role", "work"], "worker cluster child"),
                 (["/b/inboxd", "--content-sniffer"], "ingest sniffer"), (["/usr/bin/stamp"], "agent stamp"), ([], "worker")]
        owners = ["worker", "ingest", "agent", "worker"]
        for (argv, role), owner in zip(cases, owners):
            self.assertEqual(cluster.role_of(owner, argv), role, argv)

    @staticmethod
    def run_(per_s, cpu, singles, burst=(1000.0,)):
        return {"per_s": per_s, "seconds": 1.0, "handled": 10, "lost": 0, "twice": 0, "burst_us": list(burst),
                "singles_us": list(singles), "cpu_split": {"agent": cpu}, "cpu_us_per_file": cpu, "journald_us_per_file": 50}

    def test_ratios_to_local_round_by_round_and_what_the_cluster_adds(self):
        local = [self.run_(400.0, 300, [1000.0, 1200.0]), self.run_(500.0, 320, [1100.0]), self.run_(450.0, 310, [900.0])]
        one = [self.run_(200.0, 900, [3000.0]), self.run_(250.0, 1000, [2900.0, 3100.0]), None]
        got = cluster.figures({"local": local, "cluster-1": one, "cluster-2": [None] * 3})
        self.assertEqual(list(got), ["local", "cluster-1"])  # a subject with no round has no figure
        self.assertEqual((got["local"]["per_s"], got["local"]["latency_p50_us"], got["local"]["cpu_us_per_file"]),
                         (450.0, 1050, 310))
        f = got["cluster-1"]
        self.assertEqual((f["per_s"], f["to_local"], f["rounds_to_local"]), (225.0, 0.5, [0.5, 0.5]))
        self.assertEqual((f["latency_p50_us"], f["latency_to_local"], f["rounds_latency_to_local"]),
                         (3000, 2.86, [2.727, 2.727]))
        self.assertEqual(f["adds"], {"cpu_us_per_file": 640, "latency_p50_us": 1950, "burst_p50_us": 0})
        self.assertEqual(f["cpu_us_per_file_by_role"], {"agent": 950})
        self.assertNotIn("to_local", got["local"])

    def test_recorded_and_warned_like_the_other_scenarios(self):
        results = {"cluster": {"subjects": {"local": {"per_s": 400},
                                            "cluster-1": {"rounds_to_local": [0.30, 0.32, 0.31],
                                                          "rounds_latency_to_local": [2.0, 2.1, 2.05]}}}}
        self.assertEqual(bench.ratios_by_round(results), {"cluster/cluster-1 burst": ([0.30, 0.32, 0.31], "higher"),
                                                          "cluster/cluster-1 latency": ([2.0, 2.1, 2.05], "lower")})
        then = {"figures": {"cluster/cluster-1 burst": {"rounds": [0.50, 0.52, 0.51]},
                            "cluster/cluster-1 latency": {"rounds": [2.0, 2.1, 2.0]}}}
        self.assertEqual([line.split(" ")[0] for line in bench.regressions(results, then)], ["cluster/cluster-1"])
        self.assertIn("burst is slower", bench.regressions(results, then)[0])
        self.assertEqual(cluster.ratios_by_round(None), {})


if __name__ == "__main__":
    unittest.main()
