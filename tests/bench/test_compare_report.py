"""bench/compare's report and decision table, on made-up records whose answers are known:
which tables the page marks as measured at another commit, and what "serves freed memory again"
says for an allocator that hands out live blocks.  Run by ctest (compare_report)."""
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
from compare_parts.decision import _serves_again  # noqa: E402
from compare_parts.report import record_counts, tables_apart  # noqa: E402


def write_runs(records):
    d = tempfile.mkdtemp()
    with open(os.path.join(d, "runs.jsonl"), "w") as f:
        for key, commit in records:
            r = {"key": key}
            if commit:
                r["commit"] = commit
            f.write(json.dumps(r) + "\n")
    return d


class TablesApart(unittest.TestCase):
    def test_one_commit_marks_nothing(self):
        d = write_runs([("ds_table3|a", "c1"), ("survey|b", "c1"), ("rays|c", "c1")])
        self.assertEqual(tables_apart(record_counts(d)), "")

    def test_names_the_main_commit_and_each_table_elsewhere(self):
        d = write_runs([("ds_table3|a", "c1"), ("ds_table3|b", "c1"), ("survey|a", "c1"),
                        ("rays|a", "c2"), ("list|a", "c1"), ("list|b", None)])
        got = tables_apart(record_counts(d))
        self.assertIn("at `c1`", got)
        self.assertIn("the ray rates at `c2`", got)
        self.assertIn("the list workload in part before records named their commit", got)
        self.assertNotIn("the survey", got)
        self.assertNotIn("Table 3", got)

    def test_tables_at_one_other_commit_are_named_together(self):
        d = write_runs([("survey|a", "c1"), ("survey|b", "c1"), ("rays|a", "c1"),
                        ("ds_table3|a", "c2"), ("embree|a", "c2"), ("list|a", "c3")])
        got = tables_apart(record_counts(d))
        self.assertRegex(got, r"Table 3[^;]* and Embree's builds at `c2`")
        self.assertEqual(got.count("`c2`"), 1)
        self.assertIn("the list workload at `c3`", got)

    def test_the_checks_count_by_their_commit(self):
        d = write_runs([("ds_table3|a", "c1"), ("embree|a", "c1")])
        os.mkdir(os.path.join(d, "checks"))
        with open(os.path.join(d, "checks", "gpu.txt"), "w") as f:
            f.write("commit c2\nNVIDIA H200, 580\n")
        got = tables_apart(record_counts(d))
        self.assertIn("the checks at `c2`", got)
        self.assertNotIn("Embree", got)

    def test_no_records(self):
        self.assertEqual(tables_apart(record_counts(tempfile.mkdtemp())), "")


def reuse_row(name, size, refill, served, mismatches=0):
    return {"allocator": name, "size": str(size), "refill_size": str(refill), "served": served,
            "mismatches": str(mismatches)}


class ServesAgain(unittest.TestCase):
    def test_all_some_none_and_unmeasured(self):
        rows = [reuse_row("A", 16, 16, "1.0000"), reuse_row("A", 64, 64, "0.9950"),
                reuse_row("B", 16, 16, "0.5000"), reuse_row("B", 16, 64, "1.0000"),
                reuse_row("C", 16, 16, "0.0000")]
        self.assertEqual(_serves_again(rows, "A"), "yes")
        self.assertEqual(_serves_again(rows, "B"), "in part (0.50)")
        self.assertEqual(_serves_again(rows, "C"), "no")
        self.assertEqual(_serves_again(rows, "D"), "not measured")

    def test_live_blocks_handed_out_again_is_not_reuse(self):
        rows = [reuse_row("W", 16, 16, "1.0000", mismatches=12), reuse_row("W", 64, 64, "1.0000")]
        self.assertEqual(_serves_again(rows, "W"), "no: overwrites live blocks")


if __name__ == "__main__":
    unittest.main()
