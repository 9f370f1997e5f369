"""A report's ``stats_config`` read back (:func:`stats_from_dict`): the settings a shard, a baseline or a
night's report was decided with, each field checked as its option is, for the merge and the diff."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..maths import stats, stopping
from .settings import INPUTS_INTERVALS, StatsConfig
from .values import check_score_name, parse_fraction, parse_rate, parse_score_range, score_number


def stats_from_dict(data: Mapping[str, Any], where: str = "stats_config") -> StatsConfig:
    """The :class:`StatsConfig` a report's ``stats_config`` was written from (:meth:`StatsConfig.to_dict`),
    each field checked as its option is: one missing or of another kind is a ``ValueError`` naming it
    (``stats_config.level: …``), never a ``KeyError`` or ``TypeError``."""

    def get(name: str, parse: Callable[[Any], Any]) -> Any:
        if name not in data:
            raise ValueError(f"{where}.{name} is missing")
        try:
            return parse(data[name])
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{where}.{name}: {exc}") from None

    def flag(value: Any) -> bool:
        if not isinstance(value, bool):
            raise ValueError(f"must be true or false, got {value!r}")
        return value

    def whole(least: int | None) -> Callable[[Any], int]:
        def parse(value: Any) -> int:
            if type(value) is not int or (least is not None and value < least):
                raise ValueError(
                    f"must be a whole number{'' if least is None else f' of at least {least}'}, got {value!r}"
                )
            return value

        return parse

    def choice(*choices: str) -> Callable[[Any], str]:
        def parse(value: Any) -> str:
            if value not in choices:
                raise ValueError(f"must be one of {', '.join(choices)}, got {value!r}")
            return str(value)

        return parse

    def metrics(value: Any) -> tuple[tuple[str, int], ...]:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError(f'must be an array of metrics such as "pass^3", got {value!r}')
        return tuple(stats.parse_metrics(value))

    def bars(value: Any) -> tuple[tuple[str, float], ...]:
        if not isinstance(value, Mapping) or not value:
            raise ValueError(f"must be an object of score names and bars, got {value!r}")
        return tuple(
            sorted((check_score_name(name), score_number(bar, f"the bar of {name!r}")) for name, bar in value.items())
        )

    if not isinstance(data, Mapping):
        raise ValueError(f"{where} must be an object, got {data!r}")
    return StatsConfig(
        method=get("method", stats.parse_method),
        confidence=get("level", stats.parse_confidence),
        prior=get("prior", stats.parse_prior),
        intervals=get("intervals", flag),
        min_rate=get("min_rate", lambda v: None if v is None else parse_rate(v)),
        undecided=get("undecided", choice("fail", "pass")),
        errors=get("errors", choice("count", "exclude")),
        latency=get("latency", flag),
        latency_quantile=get("latency_quantile", parse_fraction),
        metrics=get("metrics", metrics),
        gate_items=get("gate_items", flag),
        stop=get("stop", lambda v: None if v is None else stopping.parse_mode(v)),
        explain=get("explain", flag),
        score_range=(0.0, 1.0) if data.get("score_range") is None else get("score_range", parse_score_range),
        min_scores=() if data.get("min_score") is None else get("min_score", bars),
        resamples=get("resamples", whole(1)),
        seed=get("seed", whole(None)),
        min_inputs=get("min_inputs", whole(2)),
        inputs_interval=INPUTS_INTERVALS[get("inputs_interval", choice(*INPUTS_INTERVALS))],
    )


#: Ini ``prob_inputs_interval``'s values -> ``maths.inputs``' methods: the cluster-adjusted Wilson interval
#: (the default: it keeps its coverage with few inputs), the percentile cluster bootstrap, Student's t.
