"""The domain's value types, below every layer: the case file (casefile), the one clock
(clock), legal periods and due days (legal_time, deadlines), the money's arithmetic (fees), the
species and example rates (tariff), digits as a Hindi keyboard types them (digits), control
characters refused (textguard) and the identifiers shown as words (vocabulary). Imports nothing of
the product but :mod:`webapp.errors` and :mod:`webapp.i18n`."""
