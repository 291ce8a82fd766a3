"""paysdk's benchmarks: every row of issue 8's table as a ratio to its baseline, in one run.

    python -m benchmarks [--quick] [--only ROW ...] [--list-count N]     (``make bench``)

See docs/performance.md for the rows, the goals and how they are measured.
"""
