"""config/retry.py: the retry policy (--prob-retry), pure parts."""

from __future__ import annotations

import email.utils
import time

import pytest

from pytest_probability.config import retry


class RateLimited(Exception):
    pass


class Throttled(RateLimited):
    def __init__(self, retry_after=None, response=None):
        super().__init__("slow down")
        self.retry_after = retry_after
        self.response = response


class Response:
    def __init__(self, headers):
        self.headers = headers


def test_split_names():
    assert retry.split_names("RateLimitError, httpx.HTTPStatusError  TimeoutError") == [
        "RateLimitError",
        "httpx.HTTPStatusError",
        "TimeoutError",
    ]
    assert retry.split_names(["a b", "c"]) == ["a", "b", "c"]


def test_import_class_errors_name_the_path():
    assert (
        retry.import_class("concurrent.futures.TimeoutError") is __import__("concurrent.futures").futures.TimeoutError
    )
    with pytest.raises(ValueError, match="cannot import 'no_such_module_xyz.Error'"):
        retry.import_class("no_such_module_xyz.Error")
    with pytest.raises(ValueError, match="has no Nope"):
        retry.import_class("json.Nope")
    with pytest.raises(ValueError, match="not an exception class"):
        retry.import_class("json.JSONDecoder")


def test_matches_on_the_mro_by_bare_name_or_dotted_path():
    policy = retry.RetryPolicy.build(2, ["RateLimited", "json.JSONDecodeError"])
    assert policy.matches(Throttled())  # a subclass of a listed bare name
    assert policy.matches(__import__("json").JSONDecodeError("x", "", 0))
    assert not policy.matches(ValueError("other"))
    everything = retry.RetryPolicy.build(2, ["Exception", "BaseException"])
    assert not everything.matches(AssertionError("wrong answer"))
    assert not everything.matches(pytest.fail.Exception("failed"))
    assert not everything.matches(pytest.skip.Exception("skipped"))
    assert not everything.matches(KeyboardInterrupt())


def test_retry_after_attribute_header_and_http_date():
    assert retry.retry_after(Throttled(retry_after=3)) == 3.0
    assert retry.retry_after(Throttled(retry_after="2.5")) == 2.5
    assert retry.retry_after(Throttled(response=Response({"retry-after": "7"}))) == 7.0
    assert retry.retry_after(Throttled(response=Response({"Retry-After": "-4"}))) == 0.0
    future = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= retry.retry_after(Throttled(response=Response({"Retry-After": future}))) <= 31
    assert retry.retry_after(Throttled(response=Response({"Retry-After": "soon"}))) is None
    assert retry.retry_after(RateLimited()) is None


def test_wait_honours_retry_after_capped_else_backs_off_with_jitter():
    policy = retry.RetryPolicy.build(5, ["RateLimited"], backoff=1.0, max_wait=10.0)
    assert policy.wait(Throttled(retry_after=4), 1) == 4.0
    assert policy.wait(Throttled(retry_after=400), 1) == 10.0
    waits = [policy.wait(RateLimited(), attempt) for attempt in (1, 2, 3, 4, 5, 6) for _ in range(50)]
    assert all(0 <= w <= 10 for w in waits)
    assert max(policy.wait(RateLimited(), 1) for _ in range(200)) <= 1.0
    assert max(policy.wait(RateLimited(), 4) for _ in range(200)) > 1.0  # grows: up to 8 s at the 4th


def test_describe():
    assert retry.describe(Throttled()) == (f"{__name__}.Throttled", "slow down")
    assert retry.describe(ValueError("")) == ("ValueError", "ValueError")


def test_a_group_of_one_is_matched_and_described_by_its_exception():
    """pytest-trio raises a benchmark's exception inside its nursery's group."""
    try:
        from builtins import BaseExceptionGroup, ExceptionGroup
    except ImportError:  # Python 3.10: the backport trio raises there
        from exceptiongroup import BaseExceptionGroup, ExceptionGroup

    from pytest_probability.groups import leaf

    error = ConnectionError("reset")
    nested = BaseExceptionGroup("outer", [ExceptionGroup("inner", [error])])
    assert leaf(nested) is error and leaf(ExceptionGroup("g", [error])) is error and leaf(error) is error
    two = ExceptionGroup("two", [error, ValueError("v")])
    around = ExceptionGroup("g", [two])
    assert leaf(two) is two and leaf(around) is around
    policy = retry.RetryPolicy.build(1, ["ConnectionError"])
    assert policy.matches(nested) and not policy.matches(two)
    assert not policy.matches(ExceptionGroup("g", [AssertionError("wrong")]))
    assert retry.describe(nested) == ("ConnectionError", "reset")
