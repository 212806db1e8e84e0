"""Diagrams: process versions deployed and loaded (repository), as administrators see and
compare them (versions), and the modeler's drafts (drafts). Imports the engine, the store and the
value types; no other service package."""
