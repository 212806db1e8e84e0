"""Administrators' pages: tariffs, process versions, the modeler and its form preview,
incidents, the timer monitor and API tokens (security)."""
