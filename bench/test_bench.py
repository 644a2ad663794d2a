#!/usr/bin/env python3
"""Tests of bench.py's own logic (no agent needed): python3 bench/test_bench.py"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402


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
        cases = [("empty", "f3.txt", 0), ("text", "f3.txt", 65), ("text-bare", "f3", 65), ("binary-bare", "f3", 2048)]
        for kind, name, size in cases:
            files = bench.Files(kind)
            self.assertEqual((files.name("f", 3), len(files.data(3))), (name, size), kind)
        self.assertNotIn(b"\0", bench.Files("text-bare").data(3))
        self.assertEqual(bench.Files("binary-bare").data(5), bench.Files("binary-bare").data(5))  # the same in every round

    def test_mix_cycles_the_corpus(self):
        files = bench.Files("mix", [("photo.png", b"\x89PNG"), ("notes", b"text\n")])
        self.assertEqual([files.name("f", i) for i in range(3)], ["f0-photo.png", "f1-notes", "f2-photo.png"])
        self.assertEqual(files.data(3), b"text\n")


if __name__ == "__main__":
    unittest.main()
