"""Benchmark: how long the migration dry run and the move take per running case.

Builds a fresh SQLite database in a temporary folder, starts N cases of the bundled Rule 130
process (half of them published and in their auction, half in their release window), deploys a
version 2 with an added reminder task, then times ``migration.plan`` (the dry run) and
``migration.move_all`` and prints the figures:

    .venv/bin/python tools/bench_migration.py [N]      # default N = 40
"""

from __future__ import annotations

import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from webapp.services.cases import migration
from webapp.services.diagrams import repository
from webapp.services.jobs import timers
from webapp.services.people import users
from webapp.services.running import uow
from webapp.services.tasks import tasks
from webapp.store import db
from webapp.values import clock

REMINDER = '''<bpmn:serviceTask id="n_svc_remind_period" name="Remind the sarpanch: period over">
      <bpmn:documentation>Rule 130(e): the objection period is over.</bpmn:documentation>
      <bpmn:extensionElements>
        <spiffworkflow:serviceTaskOperator id="notify.officers" resultVariable="reminded">
          <spiffworkflow:parameters>
            <spiffworkflow:parameter id="roles" type="any" value="[&quot;sarpanch&quot;]"/>
            <spiffworkflow:parameter id="template" type="str" value="&quot;{case}: the objection period is over.&quot;"/>
          </spiffworkflow:parameters>
        </spiffworkflow:serviceTaskOperator>
      </bpmn:extensionElements>
      <bpmn:incoming>nf_timer_end</bpmn:incoming>
      <bpmn:outgoing>nf_remind_end</bpmn:outgoing>
    </bpmn:serviceTask>
    <bpmn:sequenceFlow id="nf_remind_end" sourceRef="n_svc_remind_period" targetRef="n_end_period"/>
    <bpmn:endEvent id="n_end_period"'''


def version_2() -> bytes:
    text = (repository.BUNDLED_PROCESS / "rule130.bpmn").read_text(encoding="utf-8")
    for old, new in [
        ('<bpmn:endEvent id="n_end_period"', REMINDER),
        ('targetRef="n_end_period"/>', 'targetRef="n_svc_remind_period"/>'),
        ('<bpmn:incoming>nf_timer_end</bpmn:incoming>\n    </bpmn:endEvent>',
         '<bpmn:incoming>nf_remind_end</bpmn:incoming>\n    </bpmn:endEvent>'),
        ('<bpmn:flowNodeRef>n_mg_decide</bpmn:flowNodeRef>',
         '<bpmn:flowNodeRef>n_mg_decide</bpmn:flowNodeRef><bpmn:flowNodeRef>n_svc_remind_period</bpmn:flowNodeRef>'),
    ]:
        text = text.replace(old, new, 1)
    return text.encode("utf-8")


def main(count: int) -> None:
    folder = tempfile.mkdtemp(prefix="rule130-bench-")
    url = f"sqlite:///{folder}/bench.db"
    db.upgrade(url)
    sessions = db.session_factory(db.make_engine(url))
    vc = clock.VirtualClock(datetime.fromisoformat("2026-01-05T10:00:00+05:30"))
    with clock.installed(vc):
        with sessions() as session:
            repository.deploy_bundled(session, "bench")
            users.create_panchayat(session, "RMP", "Rampura", "SAM1")
            keeper = users.create_user(session, "pk", "bench-password", "pound_keeper", panchayat_code="RMP",
                                       password_method="pbkdf2:sha256:1000")
            secretary = users.create_user(session, "sec", "bench-password", "secretary", panchayat_code="RMP",
                                          password_method="pbkdf2:sha256:1000")
            session.commit()
        from webapp.services.cases import cases
        ids = []
        for _ in range(count // 2):
            ids.append(uow.perform(sessions, "start", cases.start_case, keeper, impounded_at=vc.now(),
                                   place_seized="Bhimpura", place_impounded="Kanji House", nearest_village="Bhimpura",
                                   animals=[{"species": "cow", "description": "brown cow"}]).id)
        vc.set(datetime.fromisoformat("2026-01-09T00:00:01+05:30"))
        timers.fire_due(sessions)
        vc.set(datetime.fromisoformat("2026-01-09T11:00:00+05:30"))
        for case_id in ids:
            uow.perform(sessions, "publish", tasks.act, secretary, case_id, "ut_publish_notice",
                        {"objection_period_days": 30, "full_price": "12000"})
        for _ in range(count - count // 2):
            uow.perform(sessions, "start", cases.start_case, keeper, impounded_at=vc.now(),
                        place_seized="Bhimpura", place_impounded="Kanji House", nearest_village="Bhimpura",
                        animals=[{"species": "cow", "description": "black cow"}])
        with sessions() as session:
            repository.deploy(session, version_2(), repository.read_bundled()[1], "bench", "reminder")
            session.commit()
        started = time.perf_counter()
        with sessions() as session:
            verdicts = migration.plan(session, "bench", repository.PROCESS_ID, 2)
        planned = time.perf_counter() - started
        started = time.perf_counter()
        results = migration.move_all(sessions, "bench", repository.PROCESS_ID, 2)
        moved = time.perf_counter() - started
    print(f"running cases: {len(verdicts)}; movable: {sum(v.movable for v in verdicts)}; "
          f"moved: {sum(r.moved for r in results)}")
    print(f"dry run: {planned * 1000:.0f} ms in all, {planned * 1000 / len(verdicts):.1f} ms per case")
    print(f"move all (dry run again, then one transaction per case): {moved * 1000:.0f} ms in all, "
          f"{moved * 1000 / len(results):.1f} ms per case")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 40)
