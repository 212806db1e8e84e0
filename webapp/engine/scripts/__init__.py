"""What a diagram's expressions and scripts may do: the restricted script environment (sandbox,
RestrictedPython) and the bounds on what they compute, in time and in memory (bounds). Below the
rest of the engine: reading a diagram checks its expressions here, and running an instance runs them
here."""
