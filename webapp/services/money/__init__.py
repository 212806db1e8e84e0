"""Money: the case ledger in exact rupees (ledger), the tariffs with effective dates
(tariffs) and reading rupee amounts (amounts). Imports :mod:`webapp.services.people` below it."""
