"""Notifications: the in-app inbox (notifications), e-mail and webhook channels (channels),
the outbox of deliveries (deliveries) and each user's choice of channels (preferences). Imports
:mod:`webapp.services.people` below it."""
