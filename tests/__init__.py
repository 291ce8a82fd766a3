"""paysdk's tests. tests.merchant holds shared assertions, so pytest rewrites them too."""

import pytest

pytest.register_assert_rewrite("tests.merchant")
