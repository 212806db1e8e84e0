"""The identifiers that pages show as words (roles, statuses, outcomes, accounts, decisions, species),
marked for the catalogue so the ``words`` filter shows them in the officer's language.

``words`` turns ``not_proved`` into ``not proved`` and looks that up in the catalogue; an identifier
missing here is shown in English words. The Hindi follows the Rajasthan Panchayati Raj usage.
"""

from __future__ import annotations

from webapp.i18n import N_

ROLES = (N_("pound keeper"), N_("secretary"), N_("sarpanch"), N_("appellate authority"), N_("receiving officer"),
         N_("administrator"), N_("timer"))
STATUSES = (N_("running"), N_("completed"), N_("open"), N_("sold"), N_("unsold"), N_("withdrawn"), N_("dispatched"),
            N_("in force"), N_("scheduled"), N_("replaced"), N_("superseded"))
OUTCOMES = (N_("pending"), N_("released by owner"), N_("returned to objector"), N_("auction final"),
            N_("security forfeited"), N_("closed no animals"))
ACCOUNTS = (N_("suspense"), N_("pound account"), N_("panchayat fund"), N_("buyer"), N_("objector"), N_("owner"),
            N_("pound keeper"), N_("receiving officer"))
LEDGER_KINDS = (N_("auction money"), N_("auction money repaid"), N_("balance"), N_("buyer feeding"),
                N_("feeding balance"), N_("feeding charges"), N_("fine and feeding"), N_("remittance"),
                N_("remittance balance"), N_("security"), N_("security refund"), N_("reversal"))
DECISIONS = (N_("proved"), N_("not proved"), N_("interim delivery"), N_("upheld"), N_("reversed"),
             N_("accept highest bid"), N_("neighbouring panchayat"), N_("cattle fair"), N_("full price"),
             N_("accepted highest bid"), N_("order auction stand"), N_("ownership"))
EVENTS = (N_("death"), N_("escape"), N_("birth"), N_("refusal"), N_("notification"))
SPECIES = (N_("cow"), N_("bullock"), N_("buffalo"), N_("camel"), N_("horse"), N_("goat"), N_("sheep"))
DEADLINES = (N_("release window"), N_("auction"), N_("objection period"), N_("appeal period"), N_("transfer lock"),
             N_("return period"))
DISPOSALS = (N_("released"), N_("sold by receiver"), N_("sent to receiver"), N_("delivered to objector"),
             N_("kept by objector"), N_("died"), N_("escaped"), N_("in pound"))
DELIVERIES = (N_("pending"), N_("sending"), N_("sent"), N_("failed"), N_("email"), N_("webhook"), N_("inbox"))
HISTORY_DATA = (N_("timers fired"), N_("timers"), N_("open tasks"), N_("version"),
                # a correction's (webapp.services.cases.corrections)
                N_("act"), N_("act name"), N_("act at"), N_("reason"), N_("entries reversed"), N_("reversing entries"),
                N_("documents cancelled"), N_("told"))
HISTORY = (N_("Cattle impounded"), N_("Appeal filed"), N_("Objection filed"), N_("Death recorded"),
           N_("Escape recorded"), N_("Task reassigned"), N_("Birth recorded"), N_("Act corrected"))
EVENTS_OF_INCIDENTS = (N_("Incident opened: case held"), N_("Incident: the step failed again; case still held"),
                       N_("Incident retried: case released"), N_("Incident skipped: case released"))
TASK_STATUSES = (N_("ready"), N_("overdue"), N_("mine"), N_("unclaimed"), N_("completed"), N_("cancelled"))
INCIDENTS = (N_("open"), N_("retried"), N_("skipped"), N_("handler error"), N_("script refused"),
             N_("timer expression"), N_("ledger invariant"))
ACTIONS = (N_("fire timers"), N_("complete task"), N_("start case"), N_("claim task"), N_("release task"),
           N_("reassign task"), N_("file objection"), N_("file appeal"), N_("record animal event"),
           N_("record death"), N_("record escape"), N_("publish notice"), N_("bid"), N_("deadline reminders"),
           N_("move case"), N_("retry incident"), N_("skip incident"), N_("deploy"), N_("redeploy"), N_("move"),
           N_("migration"), N_("record birth"), N_("reverse entry"), N_("correct act"), N_("add tariff"),
           # the simulator's actions (tests/scenarios/FORMAT.md), named in the history of a refusal
           N_("decide appeal"), N_("decide ownership"), N_("decide unsold"), N_("deliver to objector"),
           N_("grant interim delivery"), N_("order auction stand"), N_("pay feeding charges"),
           N_("record remittance"), N_("release by owner"), N_("return by buyer"), N_("return by objector"))
NOTIFICATIONS = (N_("report raised"), N_("auction unsold"), N_("cattle dispatched"), N_("outcome final"),
                 N_("feeding charges due"), N_("case closed"), N_("incident opened"), N_("objection filed"),
                 N_("appeal filed"), N_("task ready"), N_("deadline near"), N_("period ended"), N_("task overdue"),
                 N_("task escalated"))
# the names of the data recorded in the case history (form fields and facts of the handlers)
DATA = (N_("animals"), N_("animal"), N_("bidder"), N_("amount"), N_("appellant"), N_("decision"), N_("choice"),
        N_("receiver"), N_("receiver user id"), N_("objection period days"), N_("recipients"), N_("objector"),
        N_("owner"), N_("proceeds"), N_("expenses"), N_("security"), N_("days"), N_("kind"), N_("tag"),
        N_("message"), N_("incident"), N_("action"), N_("reason"), N_("task"), N_("to"), N_("from"), N_("note"),
        N_("buyer"), N_("against"), N_("filed on"), N_("last day"), N_("period"), N_("round"), N_("position"),
        N_("species"), N_("description"), N_("element"), N_("version from"), N_("version to"), N_("due"),
        N_("days left"), N_("consequence"), N_("send to"), N_("full price"), N_("impounded at"),
        N_("place seized"), N_("place impounded"), N_("nearest village"), N_("lateness seconds"), N_("who"),
        N_("name"), N_("role"), N_("state"), N_("number"), N_("document"), N_("sha256 en"), N_("sha256 hi"),
        N_("calf"), N_("mother"), N_("born on"), N_("amount received"), N_("received"), N_("change"))
# what the diff of two process versions names as changed (webapp.services.diagrams.versions)
DIFF_FIELDS = (N_("type"), N_("process"), N_("name"), N_("documentation"), N_("lane"), N_("timer"), N_("condition"),
               N_("form"), N_("operator"), N_("script"), N_("flow"), N_("default"), N_("attached to"),
               N_("called process"), N_("message"))
