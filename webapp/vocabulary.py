"""The identifiers that pages show as words (roles, statuses, outcomes, accounts, decisions, species),
marked for the catalogue so the ``words`` filter shows them in the officer's language.

``words`` turns ``not_proved`` into ``not proved`` and looks that up in the catalogue; an identifier
missing here is shown in English words. The Hindi follows the Rajasthan Panchayati Raj usage.
"""

from __future__ import annotations

from .i18n import N_

ROLES = (N_("pound keeper"), N_("secretary"), N_("sarpanch"), N_("appellate authority"), N_("receiving officer"),
         N_("administrator"), N_("timer"))
STATUSES = (N_("running"), N_("completed"), N_("open"), N_("sold"), N_("unsold"), N_("withdrawn"), N_("dispatched"))
OUTCOMES = (N_("pending"), N_("released by owner"), N_("returned to objector"), N_("auction final"),
            N_("security forfeited"), N_("closed no animals"))
ACCOUNTS = (N_("suspense"), N_("pound account"), N_("panchayat fund"), N_("buyer"), N_("objector"), N_("owner"),
            N_("pound keeper"), N_("receiving officer"))
LEDGER_KINDS = (N_("auction money"), N_("auction money repaid"), N_("balance"), N_("buyer feeding"),
                N_("feeding balance"), N_("feeding charges"), N_("fine and feeding"), N_("remittance"),
                N_("remittance balance"), N_("security"), N_("security refund"))
DECISIONS = (N_("proved"), N_("not proved"), N_("interim delivery"), N_("upheld"), N_("reversed"),
             N_("accept highest bid"), N_("neighbouring panchayat"), N_("cattle fair"), N_("full price"),
             N_("accepted highest bid"), N_("order auction stand"), N_("ownership"))
EVENTS = (N_("death"), N_("escape"), N_("refusal"), N_("notification"))
SPECIES = (N_("cow"), N_("bullock"), N_("buffalo"), N_("camel"), N_("horse"), N_("goat"), N_("sheep"))
DEADLINES = (N_("release window"), N_("auction"), N_("objection period"), N_("appeal period"), N_("transfer lock"),
             N_("return period"))
DISPOSALS = (N_("released"), N_("sold by receiver"), N_("sent to receiver"), N_("delivered to objector"),
             N_("kept by objector"), N_("died"), N_("escaped"), N_("in pound"))
