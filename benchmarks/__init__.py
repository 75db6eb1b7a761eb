"""Speed and accuracy of bayeval against peer tools; ``python -m benchmarks`` runs them all."""
