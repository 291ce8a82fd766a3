"""paysdk's benchmarks: every row of the performance table as a ratio to its baseline, in one run.

    python -m benchmarks [--quick] [--only ROW ...] [--list-count N]     (``make bench``)

See docs/performance.md for the rows, the goals and how they are measured.
"""
