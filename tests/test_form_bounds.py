"""Forms are self-contained and checked in linear time (webapp.engine.forms.schemas): a remote ``$ref`` is
refused at deploy and never fetched at submission; a pattern runs on RE2 or is refused at deploy."""

from __future__ import annotations

import copy
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from webapp.errors import InvalidDiagram, Refused
from webapp.services.diagrams import repository
from webapp.services.tasks import form_schema

FORM = "record_bid.schema.json"


@pytest.fixture(scope="module")
def bundled():
    bpmn, forms = repository.read_bundled()
    return bpmn, forms


@pytest.fixture
def listener():
    """A real HTTP server on 127.0.0.1 that counts the requests it gets and answers a schema."""
    hits: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            hits.append(self.path)
            body = b'{"type": "string"}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/bidder.json", hits
    server.shutdown()
    server.server_close()


def _with_bidder(forms: dict, bidder: dict) -> dict:
    changed = copy.deepcopy(forms)
    changed[FORM]["properties"]["bidder"] = bidder
    return changed


def _problems(bpmn: bytes, forms: dict) -> list[str]:
    with pytest.raises(InvalidDiagram) as info:
        repository.check(bpmn, forms)
    return info.value.problems


def test_a_form_with_a_remote_reference_is_refused_at_deploy_naming_it(bundled, listener):
    bpmn, forms = bundled
    url, hits = listener
    problems = _problems(bpmn, _with_bidder(forms, {"$ref": url}))
    assert f"error: form {FORM}: $ref {url!r} points outside the form; a form must be self-contained (put the " \
           'definition under "$defs" and refer to it as "#/$defs/<name>"): nothing outside it is ever fetched' \
           in problems
    assert hits == []


def test_a_form_with_a_local_reference_deploys_and_one_to_nothing_is_refused(bundled):
    bpmn, forms = bundled
    good = _with_bidder(forms, {"$ref": "#/$defs/name"})
    good[FORM]["$defs"] = {"name": {"type": "string", "title": "Bidder", "maxLength": 200}}
    repository.check(bpmn, good)
    bad = _with_bidder(forms, {"$ref": "#/$defs/missing"})
    assert f"error: form {FORM}: $ref '#/$defs/missing' points to no part of the form" in _problems(bpmn, bad)


def test_submitting_a_form_with_a_remote_reference_never_fetches_it(listener):
    url, hits = listener
    schema = {"type": "object", "properties": {"bidder": {"$ref": url}}}  # a form stored before deploy refused it
    with pytest.raises(Refused) as info:
        form_schema.validate_schema(schema, {"bidder": "Ramesh"})
    assert info.value.message == (f"the form refers to {url} outside itself, which is never fetched; nothing was "
                                  "saved. An administrator must deploy a corrected form.")
    assert hits == []  # before: jsonschema's default registry requested the URL on every submission


def test_a_pattern_that_backtracks_in_python_runs_in_linear_time():
    schema = {"type": "object", "properties": {"bidder": {"type": "string", "pattern": "^(a+)+$"}}}
    started = time.monotonic()
    with pytest.raises(Refused) as info:  # Python's re: about 2 s at 25 letters, doubling per letter
        form_schema.validate_schema(schema, {"bidder": "a" * 30 + "!"})
    assert time.monotonic() - started < 0.5
    assert list(info.value.field_errors) == ["bidder"]
    form_schema.validate_schema(schema, {"bidder": "a" * 30})  # and it still matches what it should


@pytest.mark.parametrize("pattern, detail", [(r"^(a)\1$", r"invalid escape sequence: \1"),
                                             ("^(?=a)a$", "invalid perl operator: (?=")])
def test_a_pattern_that_cannot_run_in_linear_time_is_refused_at_deploy(bundled, pattern, detail):
    bpmn, forms = bundled
    bad = _with_bidder(forms, {"type": "string", "title": "Bidder", "maxLength": 200, "pattern": pattern})
    assert f"error: form {FORM}: pattern {pattern!r} cannot be checked in linear time ({detail}); write it " \
           "without backreferences or lookaround" in _problems(bpmn, bad)


def test_pattern_properties_are_refused_at_deploy(bundled):
    bpmn, forms = bundled
    bad = copy.deepcopy(forms)
    bad[FORM]["patternProperties"] = {"^(a+)+$": {"type": "string"}}
    assert f"error: form {FORM}: patternProperties is not supported; name each field under properties" \
        in _problems(bpmn, bad)


def test_the_bundled_amount_pattern_still_checks_amounts():
    schema = {"type": "object", "properties": {"amount": {"type": "string", "pattern": r"^[0-9]+(\.[0-9]{1,2})?$"}}}
    form_schema.validate_schema(schema, {"amount": "1200.50"})
    with pytest.raises(Refused):
        form_schema.validate_schema(schema, {"amount": "12.345"})


LOOP = {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}


def test_a_form_whose_references_loop_is_refused_at_deploy_naming_the_loop(bundled):
    """Issue 34, item 1: before, this deployed (201, the dry run valid) and every bid answered 500."""
    bpmn, forms = bundled
    looping = _with_bidder(forms, {"$ref": "#/$defs/a"})
    looping[FORM]["$defs"] = LOOP
    problems = _problems(bpmn, looping)
    assert (f"error: form {FORM}: its references loop without going into a field: /$defs/a -> /$defs/b -> /$defs/a; "
            "every submission would recurse without end. Make one of them a schema of its own") in problems
    # a loop through an in-place applicator (allOf) is the same loop
    through_all_of = _with_bidder(forms, {"$ref": "#/$defs/a"})
    through_all_of[FORM]["$defs"] = {"a": {"allOf": [{"$ref": "#/$defs/a"}]}}
    assert any("/$defs/a -> /$defs/a/allOf/0 -> /$defs/a" in p for p in _problems(bpmn, through_all_of))


def test_a_form_that_refers_to_itself_through_a_field_deploys(bundled):
    """A tree (a field whose items are the same shape) ends with the data: not a loop."""
    bpmn, forms = bundled
    tree = _with_bidder(forms, {"$ref": "#/$defs/person"})
    tree[FORM]["$defs"] = {"person": {"type": "string", "title": "Bidder", "maxLength": 200},
                           "family": {"type": "object", "properties": {"name": {"type": "string"},
                                      "children": {"type": "array", "items": {"$ref": "#/$defs/family"}}}}}
    repository.check(bpmn, tree)


def test_a_stored_looping_form_refuses_a_submission_with_a_message_and_not_a_500():
    schema = {"type": "object", "$defs": LOOP, "properties": {"bidder": {"$ref": "#/$defs/a"}}}
    with pytest.raises(Refused) as info:
        form_schema.validate_schema(schema, {"bidder": "Ramesh"})
    assert info.value.message == ("the form cannot check what was entered (its references loop without end); "
                                  "nothing was saved. An administrator must deploy a corrected form; until then the "
                                  "act can be recorded on paper.")


def test_a_form_whose_validator_fails_on_a_sample_is_refused_at_deploy(bundled, monkeypatch):
    """Any failure of the validator itself (here a format checker that raises) is found at deploy."""
    from webapp.engine.forms import schemas

    bpmn, forms = bundled

    def broken(_schema):
        class Failing:
            def iter_errors(self, _data):
                raise ValueError("the date checker broke")
                yield  # a generator, as jsonschema's
        return Failing()

    monkeypatch.setattr(schemas, "validator", broken)
    problems = _problems(bpmn, forms)
    assert any(p.endswith("cannot check a submission: its validator fails (ValueError: the date checker broke)")
               for p in problems)
