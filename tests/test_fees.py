"""F, C and Cb of RULE130.md ("Money") on hand-built case files; every figure worked by hand."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal

import pytest

from webapp.values import casefile, fees
from webapp.values.casefile import Animal, CaseFile, Dispatch, InterimDelivery, Release, Sale

D = Decimal


def animal(position, species="cow", fine="500.00", feeding="60.00", **kw) -> Animal:
    return Animal(position=position, species=species, description=f"{species} {position}", tag=f"T-{position}",
                  fine=D(fine), feeding_per_day=D(feeding), **kw)


def case_file(*animals: Animal, impounded_on=date(2026, 1, 5), **kw) -> CaseFile:
    return CaseFile(case_number="RMP/2026/0001", timezone="Asia/Kolkata",
                    impounded_at=datetime(2026, 1, 5, 4, 30, tzinfo=UTC), impounded_on=impounded_on,
                    place_seized="Bhimpura", place_impounded="Kanji House", nearest_village="Bhimpura",
                    animals=list(animals), **kw)


def sale(day, amount="12000.00", returned_on=None, round=1) -> Sale:
    return Sale(buyer="Bidder B", amount=D(amount), day=day, kind="full_price", auction_round=round,
                returned_on=returned_on)


def test_fine_counts_every_animal_impounded_by_species():
    cf = case_file(animal(1), animal(2, "bullock", "450.00", "75.25"), animal(3, "goat", "100.00", "20.00",
                                                                            died_on=date(2026, 1, 6)))
    assert fees.fine(cf) == D("1050.00")  # 500 + 450 + 100 (the dead goat still counts)


def test_feeding_runs_to_today_while_the_animals_are_in_the_pound():
    cf = case_file(animal(1), animal(2))
    assert fees.pound_feeding(cf, date(2026, 1, 5)) == D("120.00")  # 2 x 60 x 1 day (impound day counted)
    assert fees.pound_feeding(cf, date(2026, 1, 8)) == D("480.00")  # 2 x 60 x 4 days
    assert fees.fine_and_feeding(cf, date(2026, 1, 8)) == D("1480.00")


def test_feeding_ends_on_the_sale_day_both_ends_counted():
    cf = case_file(animal(1), animal(2), sale=sale(date(2026, 1, 10)))
    # 01-05..01-10 = 6 days x 2 x 60, whatever day it is now
    assert fees.pound_feeding(cf, date(2026, 3, 1)) == D("720.00")


def test_feeding_stops_on_the_day_of_death_or_escape():
    cf = case_file(animal(1, died_on=date(2026, 1, 7)), animal(2, escaped_on=date(2026, 1, 5)), animal(3),
                   sale=sale(date(2026, 1, 10)))
    # 60 x 3 (01-05..01-07) + 60 x 1 (escaped on the impound day) + 60 x 6 (to the sale day)
    assert fees.pound_feeding(cf, date(2026, 2, 1)) == D("600.00")
    assert fees.fine(cf) == D("1500.00")


def test_an_animal_that_died_and_escaped_counts_the_earlier_day():
    a = animal(1, died_on=date(2026, 1, 9), escaped_on=date(2026, 1, 6))
    assert a.gone_on() == date(2026, 1, 6)
    assert fees.pound_feeding(case_file(a), date(2026, 1, 20)) == D("120.00")  # 2 days


@pytest.mark.parametrize("kw, days", [
    ({"dispatch": Dispatch(send_to="cattle_fair", receiver="Fair", receiver_user_id=None, day=date(2026, 1, 13))}, 9),
    ({"interim": InterimDelivery(objector="K", security=D("1000.00"), day=date(2026, 1, 10))}, 6),
    ({"release": Release(owner="Owner M", day=date(2026, 1, 7))}, 3),
])
def test_custody_ends_on_dispatch_interim_delivery_or_release(kw, days):
    cf = case_file(animal(1, "bullock", "450.00", "75.25"), **kw)
    assert fees.pound_feeding(cf, date(2026, 2, 1)) == D("75.25") * days


def test_rates_with_paise_are_exact():
    cf = case_file(animal(1, "bullock", "450.00", "75.25"), animal(2, "sheep", "80.00", "15.00"),
                   sale=sale(date(2026, 1, 13)))
    # (75.25 + 15) x 9 days (01-05..01-13) = 812.25
    assert fees.pound_feeding(cf, date(2026, 1, 13)) == D("812.25")
    assert fees.fine_and_feeding(cf, date(2026, 1, 13)) == D("1342.25")


def test_buyer_feeding_is_zero_until_the_buyer_returns_the_cattle():
    cf = case_file(animal(1), animal(2), sale=sale(date(2026, 1, 10)))
    assert fees.buyer_feeding(cf) == D("0.00")
    cf.sale.returned_on = date(2026, 3, 5)
    # days after the sale day up to and including the return: 21 (January) + 28 + 5 = 54; x 2 x 60
    assert fees.buyer_feeding(cf) == D("6480.00")
    cf.sale.returned_on = date(2026, 1, 10)  # returned on the sale day itself: no day after it
    assert fees.buyer_feeding(cf) == D("0.00")


def test_buyer_feeding_covers_only_the_animals_living_on_the_sale_day():
    cf = case_file(animal(1, died_on=date(2026, 1, 8)), animal(2), animal(3, "goat", "100.00", "20.00"),
                   sale=sale(date(2026, 1, 10), returned_on=date(2026, 1, 20)))
    # cow 2 and the goat were sold: (60 + 20) x 10 days (01-11..01-20)
    assert fees.buyer_feeding(cf) == D("800.00")


def test_second_custody_after_return_by_objector_runs_to_the_new_sale_day():
    cf = case_file(animal(1), interim=InterimDelivery(objector="K", security=D("20000.00"), day=date(2026, 1, 10),
                                                       returned_on=date(2026, 2, 25)))
    # first custody 01-05..01-10 (6 days); back in the pound from 02-25, still there on 02-26 (2 days)
    assert fees.custody_periods(cf, cf.animals[0], date(2026, 2, 26)) == [
        (date(2026, 1, 5), date(2026, 1, 10)), (date(2026, 2, 25), date(2026, 2, 26))]
    assert fees.pound_feeding(cf, date(2026, 2, 26)) == D("480.00")
    cf.sale = sale(date(2026, 2, 27), amount="18000.00", round=2)
    # the round-2 sale ends the second custody, not the first: 6 + 3 days
    assert fees.pound_feeding(cf, date(2026, 4, 1)) == D("540.00")


def test_second_custody_ends_on_dispatch_or_death_after_the_return():
    cf = case_file(animal(1), animal(2), interim=InterimDelivery(
        objector="K", security=D("20000.00"), day=date(2026, 1, 10), returned_on=date(2026, 2, 25)))
    cf.animals[1].died_on = date(2026, 2, 26)
    cf.dispatch = Dispatch(send_to="neighbouring_panchayat", receiver="GP", receiver_user_id=None,
                           day=date(2026, 3, 1))
    # cow 1: 6 days + 02-25..03-01 (5 days) = 11; cow 2: 6 days + 02-25..02-26 (2 days) = 8; x 60
    assert fees.pound_feeding(cf, date(2026, 4, 1)) == D("1140.00")


def test_an_animal_dead_before_the_objector_returned_the_lot_has_no_second_custody():
    cf = case_file(animal(1), animal(2, died_on=date(2026, 1, 8)), interim=InterimDelivery(
        objector="K", security=D("1000.00"), day=date(2026, 1, 10), returned_on=date(2026, 2, 25)),
        sale=sale(date(2026, 2, 25), round=2))
    # cow 1: 6 + 1 days; cow 2: 01-05..01-08 = 4 days
    assert fees.pound_feeding(cf, date(2026, 3, 1)) == D("660.00")


def test_amounts_round_trip_through_the_case_file_json():
    cf = case_file(animal(1, "bullock", "450.00", "75.25", died_on=date(2026, 1, 6)), sale=sale(date(2026, 1, 10)))
    again = casefile.load(casefile.dump(cf))
    assert again.animals[0].feeding_per_day == D("75.25") and again.animals[0].died_on == date(2026, 1, 6)
    assert fees.pound_feeding(again, date(2026, 1, 10)) == fees.pound_feeding(cf, date(2026, 1, 10)) == D("150.50")
