"""Controllers that turn targets into joint commands each tick, and their telemetry."""
