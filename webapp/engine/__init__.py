"""The engine integration: parsing and checking diagrams, running SpiffWorkflow, the sandbox and bounds
of the expressions a diagram carries. Below the services; above the store and the domain types."""
