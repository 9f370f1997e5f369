"""Metric names and labels that deploy/ relies on, read from its PromQL.

``used_metric_names_and_labels()`` parses every PromQL expression in the
Prometheus rules (deploy/prometheus/rules/*.yml), the Grafana dashboards
(deploy/grafana/dashboards/*.json: panel queries, template variable queries,
annotation queries) and the Grafana data source provisioning (trace-to-metrics
queries), and returns ``{metric_name: {label, ...}}`` for every metric they
read that is not produced by a recording rule.

A label counts as used on a metric when

* a selector matches on it (``probability_runs_total{probability_outcome="error"}``),
* a ``by``/``without``/``on``/``ignoring``/``group_*`` clause, ``label_replace``,
  ``label_join`` or ``histogram_quantile`` (``le``) needs it on that selector, or
* something downstream reads it from the result: an alert annotation
  (``$labels.x``), a dashboard legend (``{{x}}``) or data link
  (``${__field.labels.x}``, ``${__data.fields.x}``), or a query on a recording
  rule whose expression carries the label from this metric.

Labels used on a recording rule are traced back through its expression to the
raw metrics. Names are as stored in Prometheus after OTLP translation, so the
label sets include ``job`` (service.name), the promoted resource attributes
(``promoted_resource_labels()``: test_suite_name, cicd_pipeline_name) and
``le``; ``target_info`` is listed with the resource attributes it is read for.
Prometheus's own ``ALERTS`` series are left out.

The parser is a small PromQL parser, enough for what deploy/ writes: it knows
the operators, their precedence and vector-matching modifiers, aggregations
with grouping before or after the arguments, functions, range selectors,
subqueries, ``offset`` and ``@``. It raises PromQLSyntaxError on what it does
not understand rather than guessing; `promtool check rules` remains the
authority on validity (tests/deploy runs both).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
RULE_FILES = sorted((DEPLOY / "prometheus" / "rules").glob("*.yml"))
DASHBOARD_FILES = sorted((DEPLOY / "grafana" / "dashboards").glob("*.json"))
DATASOURCE_FILES = sorted((DEPLOY / "grafana" / "provisioning" / "datasources").glob("*.yml"))
PROMETHEUS_CONFIG = DEPLOY / "prometheus" / "prometheus.yml"

# Series Prometheus makes itself; not part of what the plugin exports.
SERVER_METRICS = frozenset({"ALERTS", "ALERTS_FOR_STATE"})


# ---------------------------------------------------------------------------
# Lexer
# ---------------------------------------------------------------------------
class PromQLSyntaxError(ValueError):
    pass


KEYWORDS = {
    "and",
    "or",
    "unless",
    "by",
    "without",
    "on",
    "ignoring",
    "group_left",
    "group_right",
    "bool",
    "offset",
    "atan2",
}
AGGREGATORS = {
    "sum",
    "min",
    "max",
    "avg",
    "group",
    "stddev",
    "stdvar",
    "count",
    "count_values",
    "bottomk",
    "topk",
    "quantile",
    "limitk",
    "limit_ratio",
}
PARAM_AGGREGATORS = {"count_values", "bottomk", "topk", "quantile", "limitk", "limit_ratio"}
# Aggregations whose result keeps the input series' labels.
LABEL_KEEPING_AGGREGATORS = {"bottomk", "topk", "limitk", "limit_ratio"}
# Functions whose result labels have nothing to do with their argument's.
LABEL_DROPPING_FUNCTIONS = {"scalar", "absent", "absent_over_time", "vector", "time", "pi"}
SCALAR_FUNCTIONS = {
    "scalar",
    "time",
    "pi",
    "minute",
    "hour",
    "day_of_month",
    "day_of_week",
    "day_of_year",
    "days_in_month",
    "month",
    "year",
}

PRECEDENCE = {
    "or": 1,
    "and": 2,
    "unless": 2,
    "==": 3,
    "!=": 3,
    "<=": 3,
    "<": 3,
    ">=": 3,
    ">": 3,
    "+": 4,
    "-": 4,
    "*": 5,
    "/": 5,
    "%": 5,
    "atan2": 5,
    "^": 6,
}
RIGHT_ASSOC = {"^"}
COMPARISONS = {"==", "!=", "<=", "<", ">=", ">"}

_TOKEN_RE = re.compile(
    r"""
    (?P<ws>\s+|\#[^\n]*)
  | (?P<duration>(?:\d+(?:ms|s|m|h|d|w|y))+(?![A-Za-z0-9_]))
  | (?P<number>0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_:]*)
  | (?P<string>"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'|`[^`]*`)
  | (?P<op>==|!=|<=|>=|=~|!~|[-+*/%^<>=(){}\[\],:@])
    """,
    re.VERBOSE,
)


@dataclass
class Token:
    kind: str  # duration, number, ident, keyword, string, op, eof
    value: str
    pos: int


def tokenize(text: str) -> list[Token]:
    tokens: list[Token] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN_RE.match(text, pos)
        if not m:
            raise PromQLSyntaxError(f"unexpected character {text[pos]!r} at {pos} in {text!r}")
        kind = m.lastgroup
        value = m.group(kind)
        if kind != "ws":
            if kind == "ident" and value in KEYWORDS:
                kind = "keyword"
            tokens.append(Token(kind, value, pos))
        pos = m.end()
    tokens.append(Token("eof", "", len(text)))
    return tokens


def _unquote(s: str) -> str:
    if s[0] == "`":
        return s[1:-1]
    body = s[1:-1]
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), body)


# ---------------------------------------------------------------------------
# AST
# ---------------------------------------------------------------------------
@dataclass
class Number:
    value: float


@dataclass
class String:
    value: str


@dataclass
class Matcher:
    label: str
    op: str
    value: str


@dataclass
class Selector:
    name: str | None
    matchers: list[Matcher] = field(default_factory=list)

    @property
    def metric(self) -> str | None:
        if self.name:
            return self.name
        for m in self.matchers:
            if m.label == "__name__" and m.op == "=":
                return m.value
        return None


@dataclass
class Matrix:
    expr: object
    range: str


@dataclass
class Subquery:
    expr: object
    range: str
    step: str | None


@dataclass
class Paren:
    expr: object


@dataclass
class Unary:
    op: str
    expr: object


@dataclass
class Call:
    func: str
    args: list


@dataclass
class Aggregation:
    op: str
    grouping: str | None  # "by", "without" or None
    labels: list[str]
    param: object | None
    expr: object


@dataclass
class Binary:
    op: str
    lhs: object
    rhs: object
    return_bool: bool = False
    on: bool | None = None  # True: on(...), False: ignoring(...), None: neither
    labels: list[str] = field(default_factory=list)
    card: str = "one-to-one"  # or group_left / group_right
    include: list[str] = field(default_factory=list)


# ---------------------------------------------------------------------------
# Parser
# ---------------------------------------------------------------------------
class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.toks = tokenize(text)
        self.i = 0

    # helpers
    def peek(self, k: int = 0) -> Token:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def next(self) -> Token:
        t = self.toks[self.i]
        self.i += 1
        return t

    def error(self, msg: str) -> PromQLSyntaxError:
        t = self.peek()
        return PromQLSyntaxError(f"{msg} at {t.pos} ({t.value!r}) in {self.text!r}")

    def expect(self, value: str) -> Token:
        t = self.next()
        if t.value != value:
            self.i -= 1
            raise self.error(f"expected {value!r}")
        return t

    def accept(self, value: str) -> bool:
        if self.peek().value == value and self.peek().kind in ("op", "keyword", "ident"):
            self.i += 1
            return True
        return False

    # grammar
    def parse(self):
        node = self.expr(0)
        if self.peek().kind != "eof":
            raise self.error("unexpected token")
        return node

    def binary_op(self) -> str | None:
        t = self.peek()
        if t.kind == "op" and t.value in PRECEDENCE:
            return t.value
        if t.kind == "keyword" and t.value in PRECEDENCE:
            return t.value
        return None

    def expr(self, min_prec: int):
        lhs = self.unary()
        while True:
            op = self.binary_op()
            if op is None or PRECEDENCE[op] < min_prec:
                return lhs
            self.next()
            node = Binary(op, lhs, None)
            if self.accept("bool"):
                if op not in COMPARISONS:
                    raise self.error("bool only after a comparison")
                node.return_bool = True
            if self.peek().value in ("on", "ignoring") and self.peek().kind == "keyword":
                node.on = self.next().value == "on"
                node.labels = self.label_list()
            if self.peek().value in ("group_left", "group_right") and self.peek().kind == "keyword":
                node.card = self.next().value
                if self.peek().value == "(":
                    node.include = self.label_list()
            prec = PRECEDENCE[op]
            node.rhs = self.expr(prec if op in RIGHT_ASSOC else prec + 1)
            lhs = node

    def unary(self):
        t = self.peek()
        if t.kind == "op" and t.value in ("+", "-"):
            self.next()
            return Unary(t.value, self.expr(PRECEDENCE["^"]))
        return self.postfix(self.primary())

    def postfix(self, node):
        while True:
            t = self.peek()
            if t.value == "[" and t.kind == "op":
                self.next()
                rng = self.duration()
                if self.accept(":"):
                    step = None if self.peek().value == "]" else self.duration()
                    self.expect("]")
                    node = Subquery(node, rng, step)
                else:
                    self.expect("]")
                    if not isinstance(node, Selector):
                        raise self.error("range selector on something that is not a selector")
                    node = Matrix(node, rng)
            elif t.kind == "keyword" and t.value == "offset":
                self.next()
                self.accept("-")
                self.duration()
            elif t.kind == "op" and t.value == "@":
                self.next()
                n = self.next()
                if n.kind == "ident" and n.value in ("start", "end"):
                    self.expect("(")
                    self.expect(")")
                elif n.kind != "number":
                    raise self.error("expected a timestamp after @")
            else:
                return node

    def duration(self) -> str:
        t = self.next()
        if t.kind not in ("duration", "number"):
            self.i -= 1
            raise self.error("expected a duration")
        return t.value

    def label_list(self) -> list[str]:
        self.expect("(")
        labels = []
        while self.peek().value != ")":
            t = self.next()
            if t.kind in ("ident", "keyword"):
                labels.append(t.value)
            elif t.kind == "string":
                labels.append(_unquote(t.value))
            else:
                self.i -= 1
                raise self.error("expected a label name")
            if not self.accept(","):
                break
        self.expect(")")
        return labels

    def matchers(self) -> tuple[str | None, list[Matcher]]:
        self.expect("{")
        name = None
        out = []
        while self.peek().value != "}":
            t = self.next()
            if t.kind == "string" and self.peek().value in (",", "}"):
                name = _unquote(t.value)  # {"metric.name"}
            else:
                if t.kind not in ("ident", "keyword", "string"):
                    self.i -= 1
                    raise self.error("expected a label matcher")
                label = _unquote(t.value) if t.kind == "string" else t.value
                op = self.next()
                if op.value not in ("=", "!=", "=~", "!~"):
                    self.i -= 1
                    raise self.error("expected a matcher operator")
                val = self.next()
                if val.kind != "string":
                    self.i -= 1
                    raise self.error("expected a string")
                out.append(Matcher(label, op.value, _unquote(val.value)))
            if not self.accept(","):
                break
        self.expect("}")
        return name, out

    def primary(self):
        t = self.peek()
        if t.kind == "op" and t.value == "(":
            self.next()
            inner = self.expr(0)
            self.expect(")")
            return Paren(inner)
        if t.kind in ("number", "duration"):
            self.next()
            return Number(
                float(int(t.value, 16))
                if t.value.lower().startswith("0x")
                else _duration_seconds(t.value)
                if t.kind == "duration"
                else float(t.value)
            )
        if t.kind == "string":
            self.next()
            return String(_unquote(t.value))
        if t.kind == "op" and t.value == "{":
            name, ms = self.matchers()
            return Selector(name, ms)
        if t.kind == "ident":
            self.next()
            nxt = self.peek()
            if t.value in AGGREGATORS and (nxt.value == "(" or nxt.value in ("by", "without")):
                return self.aggregation(t.value)
            if nxt.kind == "op" and nxt.value == "(":
                return Call(t.value, self.call_args())
            if t.value.lower() in ("inf", "nan") and nxt.value != "{":
                return Number(float(t.value))
            if nxt.kind == "op" and nxt.value == "{":
                _, ms = self.matchers()
                return Selector(t.value, ms)
            return Selector(t.value, [])
        raise self.error("unexpected token")

    def call_args(self) -> list:
        self.expect("(")
        args = []
        while self.peek().value != ")":
            args.append(self.expr(0))
            if not self.accept(","):
                break
        self.expect(")")
        return args

    def aggregation(self, op: str) -> Aggregation:
        grouping, labels = None, []
        if self.peek().kind == "keyword" and self.peek().value in ("by", "without"):
            grouping = self.next().value
            labels = self.label_list()
        args = self.call_args()
        if self.peek().kind == "keyword" and self.peek().value in ("by", "without"):
            if grouping:
                raise self.error("grouping given twice")
            grouping = self.next().value
            labels = self.label_list()
        if op in PARAM_AGGREGATORS:
            if len(args) != 2:
                raise self.error(f"{op} takes a parameter and an expression")
            return Aggregation(op, grouping, labels, args[0], args[1])
        if len(args) != 1:
            raise self.error(f"{op} takes one expression")
        return Aggregation(op, grouping, labels, None, args[0])


def _duration_seconds(d: str) -> float:
    units = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}
    return sum(int(n) * units[u] for n, u in re.findall(r"(\d+)(ms|s|m|h|d|w|y)", d))


def parse(expr: str):
    """Parse a PromQL expression into the small AST above."""
    return _Parser(expr).parse()


# ---------------------------------------------------------------------------
# Label usage
# ---------------------------------------------------------------------------
def _is_scalar(node) -> bool:
    if isinstance(node, (Number, String)):
        return True
    if isinstance(node, (Paren, Unary)):
        return _is_scalar(node.expr)
    if isinstance(node, Call):
        return node.func in SCALAR_FUNCTIONS and (node.func == "scalar" or not node.args)
    if isinstance(node, Binary):
        return _is_scalar(node.lhs) and _is_scalar(node.rhs)
    return False


def _string_arg(node) -> str:
    while isinstance(node, Paren):
        node = node.expr
    if not isinstance(node, String):
        raise PromQLSyntaxError("expected a string argument")
    return node.value


def label_usage(node, required=frozenset(), usage: dict[str, set[str]] | None = None) -> dict[str, set[str]]:
    """Add to ``usage`` the labels each selector under ``node`` must carry.

    ``required`` are the labels whoever consumes the result of ``node`` reads.
    """
    usage = {} if usage is None else usage
    req = set(required)

    def walk(n, req):
        if isinstance(n, (Number, String)) or n is None:
            return
        if isinstance(n, Selector):
            name = n.metric
            if name is None:
                return
            labels = {m.label for m in n.matchers if m.label != "__name__"} | req
            usage.setdefault(name, set()).update(labels)
        elif isinstance(n, (Paren, Unary, Matrix, Subquery)):
            walk(n.expr, req)
        elif isinstance(n, Call):
            f, args = n.func, n.args
            if f == "label_replace":
                dst, src = _string_arg(args[1]), _string_arg(args[3])
                walk(args[0], (req - {dst}) | ({src} if src else set()))
            elif f == "label_join":
                dst = _string_arg(args[1])
                walk(args[0], (req - {dst}) | {_string_arg(a) for a in args[3:]})
            elif f == "histogram_quantile":
                walk(args[1], req | {"le"})
            elif f in ("sort_by_label", "sort_by_label_desc"):
                walk(args[0], req | {_string_arg(a) for a in args[1:]})
            elif f in LABEL_DROPPING_FUNCTIONS:
                for a in args:
                    walk(a, set())
            else:
                for a in args:
                    walk(a, req)
        elif isinstance(n, Aggregation):
            grouping = set(n.labels)
            if n.op in LABEL_KEEPING_AGGREGATORS:
                inner = req | grouping
            elif n.grouping == "by":
                inner = set(grouping)
            elif n.grouping == "without":
                inner = grouping | (req - grouping)
            else:
                inner = set()
            if n.op == "count_values":
                inner -= {_string_arg(n.param)}
            walk(n.param, set())
            walk(n.expr, inner)
        elif isinstance(n, Binary):
            if _is_scalar(n.lhs) or _is_scalar(n.rhs):
                walk(n.lhs, req)
                walk(n.rhs, req)
                return
            match, inc = set(n.labels), set(n.include)
            if n.op == "or":
                both = req | (match if n.on else set())
                walk(n.lhs, both | (match if n.on is False else set()))
                walk(n.rhs, both)
                return
            many, one = (n.rhs, n.lhs) if n.card == "group_right" else (n.lhs, n.rhs)
            if n.on is True:
                many_req, one_req = (req - inc) | match, match | inc
            elif n.on is False:
                many_req, one_req = (req - inc) | match, (req - match - inc) | inc
            else:
                many_req, one_req = req - inc, (req - inc) | inc
            walk(many, many_req)
            walk(one, one_req)
        else:  # pragma: no cover - parser produces nothing else
            raise TypeError(f"unknown node {n!r}")

    walk(node, req)
    return usage


# ---------------------------------------------------------------------------
# Where the expressions are
# ---------------------------------------------------------------------------
GRAFANA_MACROS = {
    "interval": "1h",
    "interval_ms": "3600000",
    "rate_interval": "5m",
    "range": "30d",
    "range_s": "2592000",
    "range_ms": "2592000000",
}
_MACRO_RE = re.compile(r"\$\{?__(interval_ms|interval|rate_interval|range_ms|range_s|range)\}?")
_VARIABLE_RE = re.compile(r"\$\{(\w+)(?::\w+)?\}|\$(\w+)|\[\[(\w+)\]\]")
_TEMPLATE_LABEL_RE = re.compile(r"\$labels\.(\w+)")
_LEGEND_LABEL_RE = re.compile(r"\{\{\s*(\w+)\s*\}\}")
_LINK_LABEL_RE = re.compile(r"__field\.labels\.(\w+)|__data\.fields\.(\w+)|__data\.fields\[\"(\w+)\"\]")


def grafana_to_promql(expr: str) -> str:
    """Replace Grafana macros and template variables with values that parse.

    Variables only ever appear inside regex matchers in these dashboards, so
    they become ``.*`` (what "All" means there).
    """
    expr = _MACRO_RE.sub(lambda m: GRAFANA_MACROS[m.group(1)], expr)
    return _VARIABLE_RE.sub(".*", expr)


@dataclass
class Expression:
    source: str  # file and place, for messages
    expr: str  # PromQL as Prometheus would receive it
    required: set[str]  # labels read from the result
    record: str | None = None  # recording rule name
    record_labels: set[str] = field(default_factory=set)  # labels the rule itself sets
    #: How Grafana sends it: "instant" or "range" (panel targets, annotations),
    #: "label_values" (a variable: the series API over the dashboard's range, the
    #: label in ``required``), "trace_to_metrics" (a data source link); "rule" for rules.
    query: str = "rule"


def rule_expressions(files=None) -> list[Expression]:
    out = []
    for path in files or RULE_FILES:
        doc = yaml.safe_load(path.read_text())
        for group in doc.get("groups", []):
            for rule in group.get("rules", []):
                name = rule.get("record") or rule.get("alert")
                where = f"{path.relative_to(REPO)}: {group['name']}/{name}"
                if "record" in rule:
                    out.append(
                        Expression(where, rule["expr"], set(), rule["record"], set((rule.get("labels") or {}).keys()))
                    )
                else:
                    texts = " ".join(str(v) for v in (rule.get("annotations") or {}).values())
                    texts += " " + " ".join(str(v) for v in (rule.get("labels") or {}).values())
                    out.append(Expression(where, rule["expr"], set(_TEMPLATE_LABEL_RE.findall(texts))))
    return out


def _link_labels(obj) -> set[str]:
    labels = set()
    for m in _LINK_LABEL_RE.finditer(json.dumps(obj)):
        labels.update(g for g in m.groups() if g)
    return labels


def _table_columns(panel) -> set[str]:
    """Label columns a table panel places, renames or styles (it reads them)."""
    names, display_names = set(), set()
    for tr in panel.get("transformations", []):
        opts = tr.get("options") or {}
        for key in ("indexByName", "renameByName"):
            names.update((opts.get(key) or {}).keys())
        display_names.update((opts.get("renameByName") or {}).values())
    for ov in panel.get("fieldConfig", {}).get("overrides", []):
        if ov.get("matcher", {}).get("id") == "byName":
            names.add(ov["matcher"].get("options", ""))
    return {
        n
        for n in names - display_names
        if re.fullmatch(r"[A-Za-z_]\w*", n) and not n.startswith(("Value", "Time", "__"))
    }


def _walk_panels(panels):
    for p in panels:
        yield p
        yield from _walk_panels(p.get("panels", []))


def _label_values_query(query: str) -> tuple[str, str] | None:
    m = re.fullmatch(r"\s*label_values\((.*),\s*(\w+)\s*\)\s*", query, re.S)
    return (m.group(1), m.group(2)) if m else None


def dashboard_expressions(files=None) -> list[Expression]:
    out = []
    for path in files or DASHBOARD_FILES:
        dash = json.loads(path.read_text())
        rel = path.relative_to(REPO)
        for panel in _walk_panels(dash.get("panels", [])):
            if panel.get("datasource", {}).get("type") not in (None, "prometheus") and not panel.get("targets"):
                continue
            links = _link_labels(panel.get("fieldConfig", {}))
            if panel.get("type") == "table":
                links |= _table_columns(panel)
            for t in panel.get("targets", []):
                if "expr" not in t:
                    continue
                if t.get("datasource", panel.get("datasource", {})).get("type") != "prometheus":
                    continue
                req = set(_LEGEND_LABEL_RE.findall(t.get("legendFormat", ""))) | links
                out.append(
                    Expression(
                        f"{rel}: panel {panel.get('title')!r} {t.get('refId')}",
                        grafana_to_promql(t["expr"]),
                        req,
                        query="instant" if t.get("instant") and not t.get("range") else "range",
                    )
                )
        for var in dash.get("templating", {}).get("list", []):
            if var.get("type") != "query":
                continue
            q = var.get("query")
            q = q.get("query", "") if isinstance(q, dict) else (q or "")
            lv = _label_values_query(q)
            if lv:
                out.append(
                    Expression(
                        f"{rel}: variable {var['name']}", grafana_to_promql(lv[0]), {lv[1]}, query="label_values"
                    )
                )
            elif q.strip() and not q.strip().startswith(("label_names(", "metrics(", "query_result(")):
                out.append(Expression(f"{rel}: variable {var['name']}", grafana_to_promql(q), set(), query="instant"))
        for ann in dash.get("annotations", {}).get("list", []):
            if ann.get("datasource", {}).get("type") == "prometheus" and ann.get("expr"):
                texts = " ".join(str(ann.get(k, "")) for k in ("titleFormat", "textFormat"))
                req = set(_LEGEND_LABEL_RE.findall(texts))
                req |= {k.strip() for k in str(ann.get("tagKeys", "")).split(",") if k.strip()}
                out.append(
                    Expression(
                        f"{rel}: annotation {ann.get('name')!r}", grafana_to_promql(ann["expr"]), req, query="range"
                    )
                )
    return out


def datasource_expressions(files=None) -> list[Expression]:
    """Trace-to-metrics queries of the Jaeger data source."""
    out = []
    for path in files or DATASOURCE_FILES:
        doc = yaml.safe_load(path.read_text())
        for ds in doc.get("datasources", []):
            t2m = (ds.get("jsonData") or {}).get("tracesToMetrics") or {}
            tags = t2m.get("tags") or []
            tag_matchers = ", ".join(f'{t.get("value") or t["key"]}="x"' for t in tags)
            for q in t2m.get("queries") or []:
                expr = q["query"].replace("$$", "$").replace("$__tags", tag_matchers)
                out.append(
                    Expression(
                        f"{path.relative_to(REPO)}: {ds['name']} tracesToMetrics {q.get('name')!r}",
                        grafana_to_promql(expr),
                        set(),
                        query="trace_to_metrics",
                    )
                )
    return out


def all_expressions() -> list[Expression]:
    return rule_expressions() + dashboard_expressions() + datasource_expressions()


def _usage_with_recording_rules() -> dict[str, set[str]]:
    exprs = all_expressions()
    parsed = [(e, parse(e.expr)) for e in exprs]
    usage: dict[str, set[str]] = {}
    for e, tree in parsed:
        if e.record is None:
            label_usage(tree, e.required, usage)
    # Labels read from a recording rule's series are read from whatever its
    # expression selects: propagate until nothing changes.
    while True:
        before = {k: set(v) for k, v in usage.items()}
        for e, tree in parsed:
            if e.record is not None:
                label_usage(tree, usage.get(e.record, set()) - e.record_labels, usage)
        if usage == before:
            return usage


def used_metric_names_and_labels() -> dict[str, set[str]]:
    """{metric name: labels read from it} for the raw series deploy/ reads.

    Recording-rule outputs (names with a colon) and Prometheus's ALERTS series
    are left out; see used_recorded_names_and_labels() for the former.
    """
    return {
        name: labels
        for name, labels in _usage_with_recording_rules().items()
        if ":" not in name and name not in SERVER_METRICS
    }


def used_label_values(ops=("=", "!=")) -> dict[tuple[str, str], set[str]]:
    """{(metric, label): values} compared with one of ``ops`` in selectors (raw and recorded)."""
    out: dict[tuple[str, str], set[str]] = {}

    def walk(n):
        if isinstance(n, Selector):
            for m in n.matchers:
                if n.metric and m.op in ops and m.label != "__name__":
                    out.setdefault((n.metric, m.label), set()).add(m.value)
        elif isinstance(n, (Paren, Unary, Matrix, Subquery)):
            walk(n.expr)
        elif isinstance(n, Call):
            for a in n.args:
                walk(a)
        elif isinstance(n, Aggregation):
            walk(n.param)
            walk(n.expr)
        elif isinstance(n, Binary):
            walk(n.lhs)
            walk(n.rhs)

    for e in all_expressions():
        walk(parse(e.expr))
    return out


def used_recorded_names_and_labels() -> dict[str, set[str]]:
    """{recording rule name: labels read from it} across rules and dashboards."""
    return {name: labels for name, labels in _usage_with_recording_rules().items() if ":" in name}


def recording_rule_names() -> set[str]:
    return {e.record for e in rule_expressions() if e.record}


def promoted_resource_labels() -> set[str]:
    """Labels that Prometheus copies from resource attributes onto every series."""
    cfg = yaml.safe_load(PROMETHEUS_CONFIG.read_text())
    attrs = (cfg.get("otlp") or {}).get("promote_resource_attributes") or []
    return {re.sub(r"[^A-Za-z0-9_]", "_", a) for a in attrs}


if __name__ == "__main__":  # pragma: no cover - a convenience for humans
    for name, labels in sorted(used_metric_names_and_labels().items()):
        print(name, sorted(labels))
