"""Benchmarks: detection quality and speed of labelaudit against peers on real label errors.

Run ``python -m benchmarks`` (or ``make bench``); see ``python -m benchmarks --help``.
"""
