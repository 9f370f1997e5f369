"""End to end: every real number is a score, and no score range overflows the statistics (issue 46, items 5, 6).

A similarity from sentence-transformers is a NumPy ``float32``, a rubric's share a ``Fraction``: both are
real numbers, which ``record_score()``, its threshold and the marker's ``min_score=`` and ``score_range=``
take like floats. A score range is bounded (``config.values.SCORE_LIMIT``): within it, scores at both ends
give a report; beyond it, the range is refused where it is given, never a traceback at the end.
"""

from __future__ import annotations

import math
import statistics
from fractions import Fraction

import numpy as np
import pytest
from sessions import CONFTEST, XDIST_ARGS, XDIST_IDS, report, section, session

XDIST = pytest.mark.parametrize("xdist", XDIST_ARGS, ids=XDIST_IDS)

#: Scores of NumPy's and the standard library's real types, a NumPy threshold, a NumPy bar, a Fraction range.
REALS = """
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from pytest_probability import record_score


@pytest.mark.probability(runs=6, min_score=np.float32(0.125), score_range=(Fraction(0), np.int64(1)))
def bench_reals(n):
    record_score(np.float32(0.5) + np.float32(n) / np.float32(100), explanation="cosine similarity")
    record_score(Fraction(n, 7), "rubric", threshold=np.float64(0.1))
    record_score(np.int64(1), "exact")
    record_score(Decimal("0.75"), "decimal")
"""


@XDIST
def test_numpy_scalars_fractions_and_decimals_are_scores(pytester: pytest.Pytester, xdist: tuple[str, ...]) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(bench_reals=REALS)
    session(pytester, *xdist, "--prob-json=report.json", ret=0)
    data = report(pytester)
    (row,) = data["rows"]
    assert (row["passes"], row["total"]) == (6, 6)
    scores = row["scores"]
    similarity = [float(np.float32(0.5) + np.float32(n) / np.float32(100)) for n in range(1, 7)]
    assert scores["score"]["n"] == 6 and scores["score"]["mean"] == pytest.approx(statistics.fmean(similarity))
    assert scores["score"]["min_score"] == 0.125
    assert scores["rubric"]["mean"] == pytest.approx(statistics.fmean(float(Fraction(n, 7)) for n in range(1, 7)))
    assert scores["rubric"]["threshold"] == 0.1
    assert scores["exact"]["mean"] == 1.0 and scores["decimal"]["mean"] == 0.75
    assert row["verdict"] == "pass"
    # every value in the report is a plain JSON number: the record holds floats, not NumPy's types
    record = next(r for r in data["records"] if r["run"] == 2)
    assert [(s["name"], type(s["value"])) for s in record["scores"]] == [
        ("score", float),
        ("rubric", float),
        ("exact", float),
        ("decimal", float),
    ]
    assert record["scores"][0]["value"] == float(np.float32(0.52))


@pytest.mark.parametrize(
    ("call", "says"),
    [
        ("record_score(np.bool_(True))", "score 'score' must be a number, got np.True_"),
        ("record_score(np.float32('nan'))", "score 'score' must be a finite number, got np.float32(nan)"),
        ("record_score(Fraction(10**400))", "score 'score' must be a finite number, got Fraction(1000"),
        ("record_score(10**400)", "score 'score' must be a finite number, got an integer of 401 digits"),
        ("record_score(complex(0.5, 0))", "score 'score' must be a number, got (0.5+0j)"),
    ],
    ids=["numpy-bool", "numpy-nan", "huge-fraction", "huge-int", "complex"],
)
def test_what_is_no_finite_real_number_is_still_refused(pytester: pytest.Pytester, call: str, says: str) -> None:
    pytester.makepyfile(
        bench_bad=f"""
from fractions import Fraction

import numpy as np
from pytest_probability import record_score

def bench_bad():
    {call}
"""
    )
    result = session(pytester, "--prob-json=report.json", "-rE", ret=1)
    assert says in result.stdout.str()
    (record,) = report(pytester)["records"]
    assert record["outcome"] == "error" and record["error_type"] in ("TypeError", "ValueError")


#: Scores at both ends of the widest range there is, and their mean and spread (squares near 10**30).
WIDEST = """
import pytest
from pytest_probability import record_score


@pytest.mark.probability(runs=8, score_range=(-1e15, 1e15), min_score=-1e15)
def bench_widest(n):
    record_score(1e15 if n % 2 else -1e15, explanation="an end")
    record_score(1e15 - n, "high")
"""


@XDIST
def test_scores_at_the_ends_of_the_widest_range_give_a_report(
    pytester: pytest.Pytester, xdist: tuple[str, ...]
) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(bench_widest=WIDEST)
    result = session(pytester, *xdist, "--prob-json=report.json", "--prob-html=report.html", ret=0)
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    (row,) = report(pytester)["rows"]
    score = row["scores"]["score"]
    assert score["n"] == 8 and score["mean"] == 0.0
    assert score["sd"] == pytest.approx(statistics.stdev([1e15, -1e15] * 4))
    assert -1e15 <= score["ci"]["low"] <= score["ci"]["high"] <= 1e15
    assert all(math.isfinite(v) for v in (row["scores"]["high"]["mean"], row["scores"]["high"]["sd"]))
    assert row["verdict"] == "pass"
    assert (pytester.path / "report.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert any("widest" in line for line in section(result))


@pytest.mark.parametrize(
    ("where", "status", "says"),
    [
        (
            "mark",
            2,
            "probability(score_range=...): the score range's ends must be within ±1,000,000,000,000,000 (10**15), "
            "got -1e+308, 1e+308",
        ),
        (
            "ini",
            4,
            "ini prob_score_range: the score range's ends must be within ±1,000,000,000,000,000 (10**15), "
            "got -1e+308, 1e+308",
        ),
    ],
)
def test_a_range_past_the_limit_is_refused_where_it_is_given(
    pytester: pytest.Pytester, where: str, status: int, says: str
) -> None:
    mark = "@pytest.mark.probability(score_range=(-1e308, 1e308))" if where == "mark" else ""
    pytester.makepyfile(
        bench_huge=f"""
import pytest
from pytest_probability import record_score

{mark}
def bench_huge(n):
    record_score(1e308 if n % 2 else -1e308)
"""
    )
    pytester.makeconftest(CONFTEST)
    if where == "ini":
        pytester.makeini("[pytest]\nprob_score_range = -1e308,1e308\n")
    result = session(pytester, "--prob-runs=4", "--prob-json=report.json", ret=status)
    output = result.stdout.str() + result.stderr.str()
    assert says in output and "Traceback" not in output
    assert not (pytester.path / "report.json").exists()
