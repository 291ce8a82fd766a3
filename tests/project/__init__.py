"""What surrounds the code: docs that run, the wheel, the release."""
