"""A scenario file (tests/scenarios/FORMAT.md) read and checked: its case, settings, tariff, steps
and expectations as a :class:`Scenario` of :class:`Step` values (instants offset-aware, amounts as
two-decimal text), or a :class:`ScenarioError` naming the first thing wrong with where it is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import yaml

from webapp.errors import Refused
from webapp.services.money.amounts import parse_amount
from webapp.services.people import users
from webapp.values import legal_time
from webapp.values.tariff import SPECIES


class ScenarioError(Exception):
    """The file cannot be read as a scenario; the message names the field."""


# -- reading ------------------------------------------------------------------------------------

class _Loader(yaml.SafeLoader):
    """YAML without implicit timestamps: instants and dates stay text, so offsets are never lost."""


_Loader.yaml_implicit_resolvers = {
    k: [(tag, regexp) for tag, regexp in v if tag != "tag:yaml.org,2002:timestamp"]
    for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()
}

ACTIONS: dict[str, tuple[set[str], set[str]]] = {  # action -> (required fields, optional fields)
    "release_by_owner": ({"owner"}, {"amount_received"}),
    "record_death": (set(), {"tag", "animal"}),
    "record_escape": (set(), {"tag", "animal"}),
    "record_birth": (set(), {"tag", "animal", "born_on", "calf_tag", "calf_description"}),
    "publish_notice": ({"objection_period_days", "full_price"}, set()),
    "bid": ({"bidder", "amount"}, set()),
    "decide_unsold": (set(), {"send_to", "receiver", "accept_highest_bid"}),
    "record_remittance": ({"proceeds", "expenses"}, set()),
    "file_objection": ({"objector"}, set()),
    "grant_interim_delivery": ({"objector", "security"}, {"reason"}),
    "decide_ownership": ({"objector", "proved"}, set()),
    "order_auction_stand": (set(), set()),
    "file_appeal": ({"appellant"}, set()),
    "decide_appeal": ({"decision"}, set()),
    "return_by_buyer": (set(), set()),
    "deliver_to_objector": (set(), set()),
    "return_by_objector": (set(), set()),
    "pay_feeding_charges": ({"amount"}, set()),
    "correct": ({"step", "reason"}, {"by"}),
    "corrigendum": ({"values", "reason"}, {"step", "by"}),
    "settle_owed": ({"item"}, set()),
}
# who takes each action (the default corrector of the act a step recorded: the role that made it)
MAKER = {"release_by_owner": "pound_keeper", "record_death": "pound_keeper", "record_escape": "pound_keeper",
         "record_birth": "pound_keeper", "publish_notice": "secretary", "bid": "secretary",
         "decide_unsold": "sarpanch", "record_remittance": "receiving_officer", "file_objection": "secretary",
         "grant_interim_delivery": "sarpanch", "decide_ownership": "sarpanch", "order_auction_stand": "sarpanch",
         "file_appeal": "secretary", "decide_appeal": "appellate_authority", "return_by_buyer": "secretary",
         "deliver_to_objector": "secretary", "return_by_objector": "secretary", "pay_feeding_charges": "sarpanch"}
CORRECTOR_ROLES = ("pound_keeper", "secretary", "sarpanch", "appellate_authority", "receiving_officer")
AMOUNT_FIELDS = {"full_price", "amount", "proceeds", "expenses", "security", "amount_received"}
OUTCOMES = ("pending", "released_by_owner", "auction_final", "returned_to_objector", "security_forfeited",
            "closed_no_animals")
TOP_KEYS = {"name", "timezone", "tariff", "case", "settings", "steps", "expect"}
CASE_KEYS = {"impounded_at", "place_seized", "place_impounded", "nearest_village", "animals"}
EXPECT_KEYS = {
    "outcome": None,
    "deadlines": {"release_last_day", "objection_last_day", "auction_last_day", "appeal_last_day"},
    "sale": {"buyer", "amount", "day", "transfer_lock_until"},
    "fees": {"fine", "pound_feeding", "buyer_feeding", "shortfall"},
    "ledger": {"suspense", "pound_account", "panchayat_fund"},
    "paid": {"buyer", "pound_keeper", "objector_security_refund", "objector"},
}


@dataclass
class Step:
    number: int
    at: datetime
    do: str
    fields: dict[str, Any]
    expect_error: Any = None


@dataclass
class Scenario:
    name: str
    timezone: str
    tariff: dict[str, dict[str, Decimal]]
    case: dict[str, Any]
    settings: dict[str, Any]
    steps: list[Step]
    expect: dict[str, Any] = field(default_factory=dict)


def _amount(value: Any, where: str) -> str:
    if isinstance(value, (bool, float)):
        raise ScenarioError(f"{where}: write amounts as quoted strings (an unquoted decimal is read as a float)")
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return value
    raise ScenarioError(f"{where}: not an amount: {value!r}")


def _instant(value: Any, where: str) -> datetime:
    try:
        return legal_time.parse_instant(str(value))
    except ValueError as error:
        why = str(error)
        if "out of range" in why or "must be in" in why:  # e.g. 2026-02-31: Python names the part
            raise ScenarioError(f"{where}: {value!r} is not a real date and time ({why})") from None
        raise ScenarioError(f"{where}: {value!r} is not a date and time with a UTC offset") from None


def _mapping(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ScenarioError(f"{where}: expected a mapping")
    return value


def _check_corrigendum(item: dict[str, Any], steps: list[Step], n: int, where: str) -> None:
    """The fields of a ``corrigendum`` step: step (an earlier act's step; absent: the opening
    record), values (a mapping of field to text), reason, by (optional)."""
    if "step" in item:
        earlier = item["step"]
        if isinstance(earlier, bool) or not isinstance(earlier, int) or not 1 <= earlier < n:
            raise ScenarioError(f"{where} (corrigendum): step must be the number of an earlier step (1 to {n - 1}), "
                                "or left out for the opening record")
        if steps[earlier - 1].do in ("correct", "corrigendum", "settle_owed"):
            raise ScenarioError(f"{where} (corrigendum): step {earlier} is not an act with a form; name the step of the act")
    values = item["values"]
    if not isinstance(values, dict) or not values or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in values.items()):
        raise ScenarioError(f"{where}.values: expected a mapping of field to text, e.g. {{amount: \"15500.00\"}}")
    if not isinstance(item["reason"], str) or not item["reason"].strip():
        raise ScenarioError(f"{where}.reason: expected text (what was recorded wrongly)")
    if "by" in item and item["by"] not in CORRECTOR_ROLES:
        raise ScenarioError(f"{where}.by: expected one of {', '.join(CORRECTOR_ROLES)}")


def load_scenario(path: str | Path) -> Scenario:
    """Read and check a scenario file.

    Raises:
        ScenarioError: unreadable, a missing or unknown key, an unknown action or species, a time
            without a UTC offset, an unquoted decimal amount, or a tag no animal has.
    """
    try:
        raw = yaml.load(Path(path).read_text(encoding="utf-8"), Loader=_Loader)
    except (OSError, yaml.YAMLError) as error:
        raise ScenarioError(f"cannot read {path}: {error}") from None
    except UnicodeDecodeError:
        raise ScenarioError(f"cannot read {path}: it is not UTF-8 text (a scenario is a YAML file)") from None
    raw = _mapping(raw, "scenario")
    unknown = set(raw) - TOP_KEYS
    if unknown:
        raise ScenarioError(f"unknown key(s): {', '.join(sorted(unknown))}")
    for key in ("name", "tariff", "case", "steps"):
        if key not in raw:
            raise ScenarioError(f"missing key: {key}")
    tz = str(raw.get("timezone") or "Asia/Kolkata")
    try:
        from zoneinfo import ZoneInfo
        ZoneInfo(tz)
    except Exception:
        raise ScenarioError(f"timezone: unknown time zone {tz!r}") from None
    tariff: dict[str, dict[str, Decimal]] = {}
    for species, rates in _mapping(raw["tariff"], "tariff").items():
        if species not in SPECIES:
            raise ScenarioError(f"tariff: unknown species {species!r} (known: {', '.join(SPECIES)})")
        rates = _mapping(rates, f"tariff.{species}")
        if set(rates) != {"fine", "feeding_per_day"}:
            raise ScenarioError(f"tariff.{species}: needs exactly fine and feeding_per_day")
        try:
            tariff[species] = {k: parse_amount(_amount(v, f"tariff.{species}.{k}"), k) for k, v in rates.items()}
        except Refused as error:
            raise ScenarioError(f"tariff.{species}: {error.message}") from None
    case = _mapping(raw["case"], "case")
    if set(case) - CASE_KEYS:
        raise ScenarioError(f"case: unknown key(s): {', '.join(sorted(set(case) - CASE_KEYS))}")
    for key in CASE_KEYS:
        if key not in case:
            raise ScenarioError(f"case: missing key: {key}")
    case["impounded_at"] = _instant(case["impounded_at"], "case.impounded_at")
    if not isinstance(case["animals"], list) or not case["animals"]:
        raise ScenarioError("case.animals: a list of one or more animals is required")
    tags = []
    for n, animal in enumerate(case["animals"], start=1):
        animal = _mapping(animal, f"case.animals[{n}]")
        if set(animal) - {"species", "description", "tag"} or "species" not in animal:
            raise ScenarioError(f"case.animals[{n}]: needs species, description and optionally tag")
        if animal["species"] not in tariff:
            raise ScenarioError(f"case.animals[{n}]: species {animal['species']!r} has no tariff")
        if animal.get("tag") is not None:
            tags.append(str(animal["tag"]))
    if len(tags) != len(set(tags)):
        raise ScenarioError("case.animals: tags must be unique")
    settings = _mapping(raw.get("settings") or {}, "settings")
    if set(settings) - {"appeal_period_days", "return_period_days"}:
        raise ScenarioError(f"settings: unknown key(s): {', '.join(sorted(set(settings) - {'appeal_period_days', 'return_period_days'}))}")
    for setting, value in settings.items():
        low, high = users.PERIOD_LIMITS[setting]
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise ScenarioError(f"settings.{setting}: expected a whole number of days from {low} to {high}, "
                                f"not {value!r}")
    steps: list[Step] = []
    births = 0  # calves recorded by earlier steps (record_birth) and not corrected since
    born: dict[int, str | None] = {}  # the step of each of those births -> its calf's tag
    if not isinstance(raw["steps"], list):
        raise ScenarioError("steps: expected a list")
    for n, item in enumerate(raw["steps"], start=1):
        item = dict(_mapping(item, f"steps[{n}]"))
        where = f"steps[{n}]"
        if "at" not in item or "do" not in item:
            raise ScenarioError(f"{where}: needs at and do")
        at = _instant(item.pop("at"), f"{where}.at")
        action = item.pop("do")
        if action not in ACTIONS:
            raise ScenarioError(f"{where}.do: unknown action {action!r}")
        expect_error = item.pop("expect_error", None)
        required, optional = ACTIONS[action]
        missing = required - set(item)
        if missing:
            raise ScenarioError(f"{where} ({action}): missing field(s): {', '.join(sorted(missing))}")
        extra = set(item) - required - optional
        if extra:
            raise ScenarioError(f"{where} ({action}): unknown field(s): {', '.join(sorted(extra))}")
        for key in AMOUNT_FIELDS & set(item):
            item[key] = _amount(item[key], f"{where}.{key}")
        if action in ("record_death", "record_escape", "record_birth"):
            # a calf born in an earlier step is an animal too: by its calf_tag, or its position after the lot's
            known = len(case["animals"]) + births
            if ("tag" in item) == ("animal" in item):
                raise ScenarioError(f"{where} ({action}): give tag or animal" + (" (the mother)" if action == "record_birth" else ""))
            if "tag" in item and str(item["tag"]) not in tags:
                raise ScenarioError(f"{where} ({action}): no animal has the tag {item['tag']!r}")
            if "animal" in item and not (isinstance(item["animal"], int) and 1 <= item["animal"] <= known):
                raise ScenarioError(f"{where} ({action}): animal must be a position from 1 to {known}")
        if action == "record_birth":
            for key in ("born_on", "calf_tag", "calf_description"):
                if key in item and not isinstance(item[key], str):
                    raise ScenarioError(f"{where}.{key}: expected text" + (" (a date such as 2026-01-07)"
                                                                          if key == "born_on" else ""))
            if "calf_tag" in item and item["calf_tag"] in tags:
                raise ScenarioError(f"{where}.calf_tag: the tag {item['calf_tag']!r} is already used")
            if expect_error is None:  # a refused birth adds no calf: its tag and position stay free
                if "calf_tag" in item:
                    tags.append(item["calf_tag"])
                born[n] = item.get("calf_tag")
                births += 1
        if action == "decide_unsold":
            if item.get("accept_highest_bid") is True:
                if "send_to" in item:
                    raise ScenarioError(f"{where}: give send_to or accept_highest_bid, not both")
            elif item.get("send_to") not in ("neighbouring_panchayat", "cattle_fair") or not item.get("receiver"):
                raise ScenarioError(f"{where}: send_to (neighbouring_panchayat or cattle_fair) and receiver, "
                                    "or accept_highest_bid: true")
        if action == "decide_ownership" and not isinstance(item["proved"], bool):
            raise ScenarioError(f"{where}: proved must be true or false")
        if action == "decide_appeal" and item["decision"] not in ("upheld", "reversed"):
            raise ScenarioError(f"{where}: decision must be upheld or reversed")
        if action == "correct":
            earlier = item["step"]
            if isinstance(earlier, bool) or not isinstance(earlier, int) or not 1 <= earlier < n:
                raise ScenarioError(f"{where} (correct): step must be the number of an earlier step (1 to {n - 1})")
            if steps[earlier - 1].do == "correct":
                raise ScenarioError(f"{where} (correct): step {earlier} is a correction; name the step of the act")
            if not isinstance(item["reason"], str) or not item["reason"].strip():
                raise ScenarioError(f"{where}.reason: expected text (why the act was wrong)")
            if "by" in item and item["by"] not in CORRECTOR_ROLES:
                raise ScenarioError(f"{where}.by: expected one of {', '.join(CORRECTOR_ROLES)}")
            if expect_error is None and earlier in born:
                # the corrected birth is undone: its calf is no animal of the lot, its tag may be given
                # again and the positions after the lot's animals no longer count it
                calf_tag = born.pop(earlier)
                if calf_tag is not None:
                    tags.remove(calf_tag)
                births -= 1
        if action == "corrigendum":
            _check_corrigendum(item, steps, n, where)
        if action == "settle_owed" and (isinstance(item["item"], bool) or not isinstance(item["item"], int)
                                        or item["item"] < 1):
            raise ScenarioError(f"{where}.item: expected the number (from 1) of the money owed")
        if steps and at < steps[-1].at:
            raise ScenarioError(f"{where}: steps must be in time order")
        steps.append(Step(n, at, action, item, expect_error))
    expect = _mapping(raw.get("expect") or {}, "expect")
    for key, value in expect.items():
        if key not in EXPECT_KEYS:
            raise ScenarioError(f"expect: unknown key {key!r}")
        if key == "outcome" and value not in OUTCOMES:
            raise ScenarioError(f"expect.outcome: {value!r} is not one of {', '.join(OUTCOMES)}")
        allowed = EXPECT_KEYS[key]
        if allowed is not None and value is not None:
            extra = set(_mapping(value, f"expect.{key}")) - allowed
            if extra:
                raise ScenarioError(f"expect.{key}: unknown key(s): {', '.join(sorted(extra))}")
    return Scenario(str(raw["name"]), tz, tariff, case, settings, steps, expect)
