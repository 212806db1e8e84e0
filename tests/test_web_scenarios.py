"""Every scenario that fits the test Panchayat (its tariff and zone) is walked again through the web
pages with the Flask test client: each officer signs in once, starts the case on the new-case form,
completes tasks through the task forms and acts through the case page's forms, while the virtual
clock moves and the timer worker fires due timers. The case must end as the scenario expects."""

from __future__ import annotations

import html
import re
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest

from webapp.i18n.formats import format_day
from webapp.services.cases import cases
from webapp.services.people import users
from webapp.services.running import acts
from webapp.services.tasks import tasks
from webapp.simulation.simulate import MAKER, _compare, _result, fire_until, load_scenario
from webapp.store.models import Case
from webapp.values.tariff import DEFAULT_TARIFF

from .conftest import PASSWORD, SCENARIOS

ROLE_LOGINS = {"pound_keeper": "pk", "secretary": "sec", "sarpanch": "sar", "appellate_authority": "app"}
TASK_ACTIONS = {  # scenario action -> (role, task element)
    "release_by_owner": ("pound_keeper", "ut_release"),
    "publish_notice": ("secretary", "ut_publish_notice"),
    "bid": ("secretary", "ut_record_bid"),
    "decide_unsold": ("sarpanch", "ut_decide_unsold"),
    "grant_interim_delivery": ("sarpanch", "ut_decide_objection"),
    "decide_ownership": ("sarpanch", "ut_decide_objection"),
    "order_auction_stand": ("sarpanch", "ut_order_stand"),
    "decide_appeal": ("appellate_authority", "ut_decide_appeal"),
    "return_by_buyer": ("secretary", "ut_return_by_buyer"),
    "deliver_to_objector": ("secretary", "ut_deliver_to_objector"),
    "return_by_objector": ("secretary", "ut_return_by_objector"),
    "pay_feeding_charges": ("sarpanch", "ut_pay_feeding_charges"),
}


def fits(path) -> bool:
    scenario = load_scenario(path)
    same_tariff = all(DEFAULT_TARIFF[s] == {k: Decimal(v) for k, v in rates.items()}
                      for s, rates in scenario.tariff.items())
    return (scenario.timezone == "Asia/Kolkata" and same_tariff
            and int(scenario.settings.get("appeal_period_days", 30)) == 30
            and int(scenario.settings.get("return_period_days", 7)) == 7)


WEB_SCENARIOS = [p for p in sorted(SCENARIOS.glob("*.yaml")) if fits(p)]


def form_data(step) -> dict[str, str]:
    f = step.fields
    if step.do == "decide_unsold":
        if f.get("accept_highest_bid") is True:
            return {"choice": "accept_highest_bid"}
        return {"choice": f["send_to"], "receiver": str(f["receiver"])}
    if step.do == "grant_interim_delivery":
        return {"decision": "interim_delivery", "security": f["security"], **({"reason": f["reason"]} if f.get("reason") else {})}
    if step.do == "decide_ownership":
        return {"decision": "proved" if f["proved"] else "not_proved"}
    return {k: str(v) for k, v in f.items()}


def day_first(text: str) -> str:
    """2026-02-08 -> Sunday, 8 February 2026 (pages show dates day first with the weekday, in English
    here), alone or within a text."""
    return re.sub(r"\d{4}-\d{2}-\d{2}", lambda found: format_day(found.group(0), "en"), text)


@pytest.mark.parametrize("path", WEB_SCENARIOS, ids=lambda p: p.stem)
def test_scenario_through_the_web_pages(path, app, sessions, officers, virtual_clock):
    scenario = load_scenario(path)
    clients = {}
    for role, username in ROLE_LOGINS.items():
        clients[role] = app.test_client()
        assert clients[role].post("/login", data={"username": username, "password": PASSWORD}).status_code == 302

    virtual_clock.set(scenario.case["impounded_at"])
    local = scenario.case["impounded_at"].astimezone(ZoneInfo("Asia/Kolkata"))
    animals = scenario.case["animals"]
    form = {"impounded_at": local.strftime("%Y-%m-%dT%H:%M"), "place_seized": scenario.case["place_seized"],
            "place_impounded": scenario.case["place_impounded"],
            "nearest_village": scenario.case["nearest_village"], "rows": str(len(animals))}
    for n, animal in enumerate(animals, start=1):
        form.update({f"species-{n}": animal["species"], f"description-{n}": animal.get("description", ""),
                     f"tag-{n}": str(animal.get("tag") or "")})
    response = clients["pound_keeper"].post("/cases/new", data=form)
    assert response.status_code == 302, response.data[:2000]
    case_id = int(response.headers["Location"].rstrip("/").split("/")[-1])

    receivers: dict[str, object] = {}
    recorded: dict[int, tuple[int, str]] = {}  # step number -> (the act it recorded, who made it)
    mismatches: list[str] = []
    for step in scenario.steps:
        fire_until(sessions, case_id, virtual_clock, step.at)
        virtual_clock.set(step.at)
        if step.do == "correct":
            response = correct(step, case_id, clients, sessions, recorded, app)
        elif step.do in ("corrigendum", "settle_owed"):
            response = corrigendum(step, case_id, clients, recorded)
        else:
            response = act(step, case_id, clients, sessions, receivers, app)
            if response is not None and response.status_code < 400:
                with sessions() as session:
                    latest = acts.latest(session, case_id)
                if latest is not None and all(latest.id != known for known, _ in recorded.values()):
                    recorded[step.number] = (latest.id, latest.actor_role or MAKER[step.do])
        if response is None:  # no such task is offered to the officer: the page cannot even be filled in
            if step.expect_error in (None, False):
                mismatches.append(f"step {step.number} {step.do}: no open task for it")
            continue
        refused = response.status_code >= 400
        body = html.unescape(response.get_data(as_text=True))  # "act's" is written act&#39;s
        if step.expect_error in (None, False):
            if refused:
                mismatches.append(f"step {step.number} {step.do}: refused ({response.status_code})")
        elif not refused:
            mismatches.append(f"step {step.number} {step.do}: expected a refusal, got {response.status_code}")
        elif step.expect_error is not True:
            wanted = str(step.expect_error)
            if wanted.lower() not in body.lower() and day_first(wanted) not in body:
                mismatches.append(f"step {step.number} {step.do}: the page does not say {wanted!r}")
    fire_until(sessions, case_id, virtual_clock, None)
    with sessions() as session:
        result = _result(cases.summary(session, session.get(Case, case_id)))
    assert mismatches == []
    assert _compare(scenario.expect, result) == []
    page = clients["secretary"].get(f"/cases/{case_id}")
    assert page.status_code == 200


def _receiver_client(app, sessions, case_id):
    """A client signed in as the case's receiving officer (the fixture's ``recv`` when none is named)."""
    with sessions() as session:
        officer_id = session.get(Case, case_id).receiving_officer_id
        from webapp.store.models import User
        username = session.get(User, officer_id).username if officer_id else "recv"
    client = app.test_client()
    client.post("/login", data={"username": username, "password": PASSWORD})
    return client


def correct(step, case_id, clients, sessions, recorded, app):
    """The ``correct`` action on the case page's correction form (no check step: recorded at once)."""
    f = step.fields
    if f["step"] not in recorded:
        return None
    act_id, maker = recorded[f["step"]]
    role = f.get("by") or maker
    client = _receiver_client(app, sessions, case_id) if role == "receiving_officer" else clients[role]
    return client.post(f"/cases/{case_id}/corrections", data={"act": str(act_id), "reason": f["reason"]})


def corrigendum(step, case_id, clients, recorded):
    """The ``corrigendum`` action on its page (the amended facts, recorded at once: no check step), and
    ``settle_owed`` on the case page's button for the money owed."""
    f = step.fields
    client = clients[f.get("by") or "secretary"]
    if step.do == "settle_owed":
        return client.post(f"/cases/{case_id}/owed/{f['item']}")
    if "step" in f and f["step"] not in recorded:
        return None
    ref = str(recorded[f["step"]][0]) if "step" in f else "opening"
    return client.post(f"/cases/{case_id}/corrigenda/{ref}",
                       data={**{f"new.{k}": v for k, v in f["values"].items()}, "reason": f["reason"]})


def act(step, case_id, clients, sessions, receivers, app):
    f = step.fields
    if step.do in ("file_objection", "file_appeal"):
        field = "objector" if step.do == "file_objection" else "appellant"
        url = f"/cases/{case_id}/{'objections' if step.do == 'file_objection' else 'appeals'}"
        return clients["secretary"].post(url, data={field: f[field]})
    if step.do in ("record_death", "record_escape", "record_birth"):
        position = f.get("animal")
        if position is None:
            with sessions() as session:
                from webapp.values import casefile
                cf = casefile.load(session.get(Case, case_id).file_json)
                position = next(a.position for a in cf.animals if a.tag == str(f["tag"]))
        if step.do == "record_birth":  # the pound keeper's birth form: the mother by her number
            return clients["pound_keeper"].post(f"/cases/{case_id}/births", data={
                "mother": str(position), "born_on": f.get("born_on", ""),
                "calf_description": f.get("calf_description", ""), "calf_tag": f.get("calf_tag", "")})
        return clients["pound_keeper"].post(f"/cases/{case_id}/animal-events",
                                            data={"kind": "death" if step.do == "record_death" else "escape",
                                                  "animal": str(position)})
    if step.do == "decide_unsold" and f.get("receiver") and f["receiver"] not in receivers:
        with sessions() as session:  # the fixture's receiving officer, or a new one of that name (as simulate does)
            receivers[f["receiver"]] = users.by_display_name(session, str(f["receiver"]), "receiving_officer") or \
                users.create_user(session, f"receiver-{len(receivers) + 1}", PASSWORD, "receiving_officer",
                                  display_name=str(f["receiver"]), password_method="pbkdf2:sha256:1000")
            session.commit()
    if step.do == "record_remittance":
        client = _receiver_client(app, sessions, case_id)
        role, element = "receiving_officer", "ut_record_remittance"
    else:
        role, element = TASK_ACTIONS[step.do]
        client = clients[role]
    match = {"objector": f["objector"]} if step.do in ("grant_interim_delivery", "decide_ownership") else {}
    with sessions() as session:
        task_id = tasks.find_ready(session, session.get(Case, case_id), element, **match)
    if task_id is None:
        return None
    data = form_data(step)
    if step.do == "release_by_owner" and "amount_received" not in data:
        # the owner hands over the total the task page shows (as the simulator fills in the amount due)
        page = client.get(f"/cases/{case_id}/tasks/{task_id}").get_data(as_text=True)
        shown = re.search(r'id="release-due"><strong>([^<]+)</strong>', page)
        assert shown is not None, "the release form shows no total to collect"
        data["amount_received"] = shown.group(1)
    return client.post(f"/cases/{case_id}/tasks/{task_id}", data=data)
