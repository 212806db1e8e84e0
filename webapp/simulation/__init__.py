"""The case simulator: a scenario file read and checked (scenario_file), run through the real
diagram and services on a virtual clock (simulate), where it may write (target), and filling a
training Panchayat from a scenario (training_fill). An entry point, like the CLI and the web."""
