"""The benchmarks (benchmarks/) still run and measure what they say."""
